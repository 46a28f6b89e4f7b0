/**
 * Test helper run as a child process (`node --import tsx hold-output-lock.ts DIR STALE_MS UPDATE_MS`):
 * takes the output folder's lock with the given timing, prints `locked` and holds it until stdin
 * closes, then prints `lost` or `released` and exits.
 */
import { lockOutputDirectory } from '../build-lock.ts';

const [directory, stale, update] = process.argv.slice(2);
const lock = await lockOutputDirectory(directory!, {
  staleMilliseconds: Number(stale),
  updateMilliseconds: Number(update),
});
let lost = false;
lock.lost.catch(() => {
  lost = true;
});
process.stdout.write('locked\n');
process.stdin.resume();
process.stdin.on('end', async () => {
  await lock.release();
  process.stdout.write(lost ? 'lost\n' : 'released\n');
  process.exit(0);
});
