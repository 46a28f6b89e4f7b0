/**
 * Canonical JSON (RFC 8785, JSON Canonicalization Scheme) through the `canonicalize` package: object
 * keys sorted by UTF-16 code units, no whitespace, `undefined` members dropped (`null` in arrays),
 * numbers as ECMAScript prints them. Equal values always give the same text, so its hash is a content
 * key (cache entries, recorded LLM responses).
 */
import canonicalizeModule from 'canonicalize';

// canonicalize is CommonJS (module.exports = function); its typings declare an ES default export.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/**
 * The RFC 8785 canonical JSON text of `value`.
 * @param value a JSON-compatible value (objects, arrays, strings, finite numbers, booleans, null)
 * @returns the canonical text, no whitespace
 * @throws TypeError for a value JSON cannot represent (a bigint, NaN, an infinite number, or a bare
 *   function, symbol or `undefined`)
 */
export function canonicalJson(value: unknown): string {
  let text: string | undefined;
  try {
    text = canonicalize(value);
  } catch (error) {
    throw new TypeError(`canonicalJson: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (text === undefined)
    throw new TypeError(`canonicalJson: a value of type ${typeof value} has no JSON representation`);
  return text;
}
