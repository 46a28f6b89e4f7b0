/**
 * A service's URL as every failure message shows it: scheme, host, port and path, without the parts
 * where credentials hide (a user name and password before the host, a query string such as
 * `?key=…`, a fragment). A message names the service a user must check (a dead service is named by
 * its address) and never carries an API key, also when a user wrote it into the URL.
 */

/**
 * The URL without user info, query and fragment; a trailing slash of the path is kept as given.
 * A string that does not parse as a URL is cut at its first `?` or `#` and loses any `user:pass@`.
 * @param url a base URL as configured (`http://host:8000/v1`)
 * @returns e.g. `http://host:8000/v1` for `http://me:sk-1@host:8000/v1?key=sk-1`
 */
export function serviceAddress(url: string): string {
  try {
    const parsed = new URL(url);
    const path =
      parsed.pathname === '/' && !/^[a-z][a-z0-9+.-]*:\/\/[^/]+\/(?:[?#]|$)/i.test(url) ? '' : parsed.pathname;
    return `${parsed.protocol}//${parsed.host}${path}`;
  } catch {
    return url.split(/[?#]/)[0]!.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1');
  }
}
