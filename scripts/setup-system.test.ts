/**
 * `setup-system.sh --edit-sources FILE`: the part of the setup script that adds Debian's contrib
 * section, run on temporary copies of both APT sources formats (never on the real /etc).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../pipeline/config.ts';

const run = promisify(execFile);
const SCRIPT = path.join(PROJECT_ROOT, 'scripts', 'setup-system.sh');

let directory: string;
beforeEach(async () => {
  directory = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-setup-'));
});
afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

/** Write `text` to a temporary file named `name`, run the script's source editing on it, return the result. */
async function edited(name: string, text: string): Promise<string> {
  const file = path.join(directory, name);
  await writeFile(file, text);
  await run('bash', [SCRIPT, '--edit-sources', file]);
  return readFile(file, 'utf8');
}

/** The component lists of every `Components:` line (deb822) or every active `deb`/`deb-src` line. */
function contribCounts(text: string): number[] {
  return text
    .split('\n')
    .filter((line) => /^(Components:|deb(-src)?\s)/.test(line))
    .map((line) => line.split(/\s+/).filter((word) => word === 'contrib').length);
}

const STOCK_DEB822 = `Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
`;

const STOCK_ONE_LINE = `# deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_]/ bookworm main
deb http://deb.debian.org/debian bookworm main non-free-firmware
deb-src http://deb.debian.org/debian bookworm main non-free-firmware
deb http://security.debian.org/debian-security bookworm-security main non-free-firmware
deb [arch=amd64] https://download.docker.com/linux/debian bookworm stable
`;

describe('setup-system.sh --edit-sources (deb822, debian.sources)', () => {
  it('Components: main -> main contrib', async () => {
    const text = await edited(
      'debian.sources',
      'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\n',
    );
    expect(text).toContain('\nComponents: main contrib\n');
  });

  it('the stock Debian 12 `main non-free-firmware` gets contrib exactly once, on every stanza', async () => {
    const text = await edited('debian.sources', STOCK_DEB822);
    expect(contribCounts(text)).toEqual([1, 1]);
    expect(text).toContain('Components: main non-free-firmware contrib\n');
    expect(text.replace(/ contrib/g, '')).toBe(STOCK_DEB822);
  });

  it('a file that already has contrib is unchanged; running twice equals running once', async () => {
    const already = STOCK_DEB822.replace(/non-free-firmware/g, 'contrib non-free-firmware');
    expect(await edited('debian.sources', already)).toBe(already);
    const once = await edited('debian.sources', STOCK_DEB822);
    expect(await edited('debian.sources', once)).toBe(once);
  });
});

describe('setup-system.sh --edit-sources (one-line, sources.list)', () => {
  it('deb ... main -> deb ... main contrib', async () => {
    const text = await edited('sources.list', 'deb http://deb.debian.org/debian bookworm main\n');
    expect(text).toBe('deb http://deb.debian.org/debian bookworm main contrib\n');
  });

  it('the stock Debian 12 lines (`main non-free-firmware`) get contrib once; comments and other repositories untouched', async () => {
    const text = await edited('sources.list', STOCK_ONE_LINE);
    const lines = text.split('\n');
    expect(lines[0]).toBe('# deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_]/ bookworm main');
    expect(lines[1]).toBe('deb http://deb.debian.org/debian bookworm main contrib non-free-firmware');
    expect(contribCounts(text)).toEqual([1, 1, 1, 0]);
    expect(lines[4]).toBe('deb [arch=amd64] https://download.docker.com/linux/debian bookworm stable');
  });

  it('a file that already has contrib is unchanged; running twice equals running once', async () => {
    const already = 'deb http://deb.debian.org/debian bookworm main contrib non-free-firmware\n';
    expect(await edited('sources.list', already)).toBe(already);
    const once = await edited('sources.list', STOCK_ONE_LINE);
    expect(await edited('sources.list', once)).toBe(once);
  });
});
