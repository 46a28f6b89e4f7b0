/**
 * A preload for the signal tests (`node --import ./scripts/testing/hold-rename.mjs CLI ...`): the
 * first rename whose `FROM -> TO` matches the pattern in DUPLEXSYNTH_TEST_HOLD_RENAME never happens:
 * the command writes the two paths to the file named by DUPLEXSYNTH_TEST_HOLD_MARKER and waits there,
 * its work unfinished (a `.partial` written, not yet renamed), until a signal ends it. The tests can
 * then send a signal at a known moment instead of guessing one.
 */
import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';

const pattern = process.env.DUPLEXSYNTH_TEST_HOLD_RENAME;
const marker = process.env.DUPLEXSYNTH_TEST_HOLD_MARKER;
if (pattern && marker) {
  const matches = new RegExp(pattern);
  const rename = fs.promises.rename;
  let held = false;
  fs.promises.rename = async (from, to) => {
    if (held || !matches.test(`${String(from)} -> ${String(to)}`)) return rename(from, to);
    held = true;
    fs.writeFileSync(marker, `${String(from)}\n${String(to)}\n`);
    // keeps the process alive while it waits: a pending promise alone would let it end
    setInterval(() => {}, 1 << 30);
    return new Promise(() => {});
  };
  syncBuiltinESMExports();
}
