/**
 * Checks a build makes before it takes the lock or writes anything, each failing with one line that
 * names the folder or setting and the cause:
 *
 * - {@link checkBuildSettings}: values a config object or the command line may carry past the schema
 *   (a safe build name and dataset folder names, a seed the random streams accept);
 * - {@link checkBuildFolders}: the output and cache folders exist or can be created, are folders, are
 *   writable, are not on a special file system (/proc, /sys, … : Node 20's recursive `mkdir` loops
 *   forever under /proc), and have room for the planned audio ({@link estimatePlannedAudioBytes}).
 */
import { constants, existsSync } from 'node:fs';
import { access, mkdir, readdir, readFile, realpath, rm, stat, statfs, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { SAFE_FOLDER_NAME, reservedSuffixMessage, reservedSuffixOf, type BuildConfig } from '../config.ts';
import type { SourceConversation } from '../model/types.ts';
import { BuildInputError, DiskFullError } from '../model/build-errors.ts';
import { formatBytes, temporaryPathFor } from '../storage/write-atomic.ts';
import { PRE_RENDERED_PAGES_DIRECTORY } from '../report/pre-rendered-pages.ts';

/**
 * Linux file systems that cannot hold a build's files (statfs `f_type`, from linux/magic.h), by name.
 * tmpfs and devtmpfs are not among them: /dev/shm is a fine place for scratch output.
 */
export const SPECIAL_FILE_SYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0xcafe4a11, 'bpf'],
  [0x6165676c, 'pstore'],
  [0xde5e81e4, 'efivarfs'],
  [0x62656570, 'configfs'],
  [0x65735543, 'fusectl'],
  [0x19800202, 'mqueue'],
  [0x42494e4d, 'binfmt_misc'],
  [0x958458f6, 'hugetlbfs'],
]);

/**
 * Mount types (the third field after ` - ` in /proc/self/mountinfo) that hold no build output. devtmpfs
 * is among them: statfs reports it as tmpfs, so only the mount table tells /dev from /dev/shm.
 */
export const SPECIAL_MOUNT_TYPES: ReadonlySet<string> = new Set([
  'devtmpfs',
  'proc',
  'sysfs',
  'devpts',
  'cgroup',
  'cgroup2',
  'debugfs',
  'securityfs',
]);

/**
 * The file-system type of the mount holding `realPath` (an absolute path with links resolved), from
 * /proc/self/mountinfo: the mount point that is the longest prefix of the path, the last listed when
 * several mounts share it. Undefined when the table cannot be read (not Linux).
 */
export async function mountTypeOf(realPath: string): Promise<string | undefined> {
  const table = await readFile('/proc/self/mountinfo', 'utf8').catch(() => undefined);
  if (table === undefined) return undefined;
  let best: { point: string; type: string } | undefined;
  for (const line of table.split('\n')) {
    const fields = line.split(' ');
    const separator = fields.indexOf('-');
    if (fields.length < 5 || separator < 0) continue;
    // mount points escape space, tab, newline and backslash as octal
    const point = fields[4]!.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
    const inside = point === '/' || realPath === point || realPath.startsWith(`${point}/`);
    if (inside && (best === undefined || point.length >= best.point.length))
      best = { point, type: fields[separator + 1] ?? '' };
  }
  return best?.type;
}

/**
 * Characters per second of synthesized speech used for the space estimate: the offline English
 * voices speak TopiOCQA at about 13 characters per second (2 real dev dialogues: 1,139 characters,
 * 86.6 s with the gaps); 12 leaves a margin.
 */
const CHARACTERS_PER_SECOND = 12;
/** Seconds added per utterance (floor-transfer gaps) and per dialogue (leading and trailing silence). */
const SECONDS_PER_UTTERANCE = 0.3;
const SECONDS_PER_DIALOGUE = 1;
/** Room kept free besides the audio (metadata, alignments, summaries), bytes. */
const MARGIN_BYTES = 1_000_000;

/**
 * Check the values the schema cannot see once a config object is built or overridden in code:
 * `name` and each built language's dataset name are safe folder names (letters, digits, `.`, `_`, `-`,
 * starting with a letter or digit, not ending in `.partial`, `.previous` or `.lock`), the seed a non-negative safe integer,
 * and the output and cache folders differ.
 * @throws BuildInputError naming the setting and the value
 */
export function checkBuildSettings(config: BuildConfig): void {
  const folderName = (value: string, setting: string) => {
    if (!SAFE_FOLDER_NAME.test(value)) {
      throw new BuildInputError(
        `${setting}: "${value}" is not a safe folder name (letters, digits, ".", "_" and "-", starting with a letter or digit)`,
      );
    }
    const suffix = reservedSuffixOf(value);
    if (suffix !== undefined) throw new BuildInputError(`${setting}: "${value}" ${reservedSuffixMessage(suffix)}`);
  };
  folderName(config.name, 'name');
  for (const language of config.languages) folderName(String(config.datasets[language] ?? ''), `datasets.${language}`);
  if (!Number.isSafeInteger(config.seed) || config.seed < 0)
    throw new BuildInputError(`seed: ${config.seed} is not a non-negative integer below 2^53`);
  if (config.corpus.limit !== null && !(Number.isSafeInteger(config.corpus.limit) && config.corpus.limit > 0)) {
    throw new BuildInputError(`corpus.limit: ${config.corpus.limit} is not a positive integer`);
  }
  if (path.resolve(config.output.directory) === path.resolve(config.output.cacheDirectory)) {
    throw new BuildInputError(
      `output.directory and output.cacheDirectory are the same folder (${config.output.directory})`,
    );
  }
}

/**
 * Bytes of the dataset WAVs a build will write (2 channels, 16-bit PCM at `sampleRate`, per built
 * language), estimated from the text length: characters / 12 per second plus 0.3 s per utterance and
 * 1 s per dialogue (see {@link CHARACTERS_PER_SECOND}).
 * @param conversations the ingested conversations
 * @param languages the languages built (each a dataset)
 * @param sampleRate output rate, Hz
 */
export function estimatePlannedAudioBytes(
  conversations: readonly SourceConversation[],
  languages: number,
  sampleRate: number,
): number {
  let seconds = 0;
  for (const conversation of conversations) {
    seconds += SECONDS_PER_DIALOGUE;
    for (const turn of conversation.turns) {
      seconds += turn.question.length / CHARACTERS_PER_SECOND + SECONDS_PER_UTTERANCE;
      if (turn.answer !== null) seconds += turn.answer.length / CHARACTERS_PER_SECOND + SECONDS_PER_UTTERANCE;
    }
  }
  return Math.ceil(seconds * sampleRate) * 2 * 2 * languages + 44 * conversations.length * languages;
}

/**
 * Check the build's output and cache folders (see the file header); both are created when missing.
 * Free space is checked separately, under the lock ({@link checkFreeSpace}).
 * @param config the build (its `output.directory` and `output.cacheDirectory`)
 * @throws BuildInputError naming the folder and the cause (not a folder, special file system,
 *   read-only, permission denied)
 */
export async function checkBuildFolders(config: BuildConfig): Promise<void> {
  await checkFolder(config.output.directory, 'output folder');
  await checkFolder(config.output.cacheDirectory, 'cache folder');
}

/**
 * Check that the output and cache folders' file systems each have `plannedBytes` + 1 MB free. Call it
 * under the output folder's lock after {@link removeUnfinishedDatasets}, so the space an interrupted
 * build's `.partial` folders held counts as free.
 * @throws DiskFullError naming the folder, the space needed and the space free
 */
export async function checkFreeSpace(config: BuildConfig, plannedBytes: number): Promise<void> {
  await checkFolder(config.output.directory, 'output folder', plannedBytes);
  await checkFolder(config.output.cacheDirectory, 'cache folder', plannedBytes);
}

/**
 * Removes the report pages an interrupted build made while it ran (`{output}/report-pages.partial/`,
 * ../report/pre-rendered-pages.ts): a build removes them however it ends, but not when it is killed;
 * nothing in them is reused, and a scored build makes none, so they would stay.
 * @returns the folder when there was one, else null
 */
export async function removeUnfinishedReportPages(outputDirectory: string): Promise<string | null> {
  const folder = path.join(outputDirectory, PRE_RENDERED_PAGES_DIRECTORY);
  if (!existsSync(folder)) return null;
  await rm(folder, { recursive: true, force: true });
  return folder;
}

/**
 * Remove the `{dataset}.partial` folders an interrupted build left in `data/{lang}/{domain}/` of the
 * output folder (a new build writes them anew). Only under the output folder's lock: then no other
 * build is writing them.
 * @returns the folders removed
 */
export async function removeUnfinishedDatasets(outputDirectory: string): Promise<string[]> {
  const removed: string[] = [];
  const data = path.join(outputDirectory, 'data');
  for (const language of await readdir(data).catch(() => [] as string[])) {
    for (const domain of await readdir(path.join(data, language)).catch(() => [] as string[])) {
      for (const name of await readdir(path.join(data, language, domain)).catch(() => [] as string[])) {
        if (!name.endsWith('.partial')) continue;
        const folder = path.join(data, language, domain, name);
        await rm(folder, { recursive: true, force: true });
        removed.push(folder);
      }
    }
  }
  return removed;
}

/**
 * Check one folder: exists or can be created, is a folder, is writable, is not on a special file
 * system, and (when `neededBytes` is given) has `neededBytes` + 1 MB free.
 * @param folder the folder
 * @param role `output folder` or `cache folder`, for the message
 * @param neededBytes bytes the build will write there; undefined = no space check
 * @throws BuildInputError, DiskFullError (see {@link checkBuildFolders})
 */
export async function checkFolder(folder: string, role: string, neededBytes?: number): Promise<void> {
  const resolved = path.resolve(folder);
  const fail = (cause: string) => new BuildInputError(`${resolved}: cannot be used as the ${role}: ${cause}`);
  // the nearest part of the path that exists must be a folder
  let existing = resolved;
  for (;;) {
    const stats = await stat(existing).catch((error: NodeJS.ErrnoException) => error);
    if (!(stats instanceof Error)) {
      if (!stats.isDirectory())
        throw fail(existing === resolved ? 'it is a file, not a folder' : `${existing} is a file, not a folder`);
      break;
    }
    if (stats.code !== 'ENOENT' && stats.code !== 'ENOTDIR') throw fail(`${existing}: ${stats.code ?? stats.message}`);
    const parent = path.dirname(existing);
    if (parent === existing) throw fail('no part of the path exists');
    existing = parent;
  }
  const fileSystem = await statfs(existing).catch(() => undefined);
  const special = fileSystem === undefined ? undefined : SPECIAL_FILE_SYSTEMS.get(fileSystem.type);
  if (special !== undefined) throw fail(`it is on the special file system ${special}, which holds no ordinary files`);
  const mountType = await mountTypeOf(await realpath(existing).catch(() => existing));
  if (mountType !== undefined && SPECIAL_MOUNT_TYPES.has(mountType))
    throw fail(`it is on the special file system ${mountType}, which holds no ordinary files`);
  try {
    await mkdir(resolved, { recursive: true });
    // named as a temporary file: one a build killed here left is removed by the next (under its lock)
    const probe = temporaryPathFor(path.join(resolved, '.duplexsynth-write-check'));
    await writeFile(probe, '');
    await rm(probe, { force: true });
  } catch (error) {
    // recursive mkdir reports ENOENT on a read-only file system; access() tells the real reason
    const denied = await access(existing, constants.W_OK).then(
      () => undefined,
      (accessError: NodeJS.ErrnoException) => accessError.code,
    );
    const code = denied ?? (error as NodeJS.ErrnoException).code;
    const causes: Record<string, string> = {
      EROFS: 'the file system is read-only',
      EACCES: 'permission denied',
      EPERM: 'operation not permitted',
    };
    throw fail(
      code !== undefined && causes[code]
        ? `${causes[code]} (${code})`
        : `cannot create or write in it (${code ?? (error as Error).message})`,
    );
  }
  if (neededBytes === undefined) return;
  const free = await statfs(resolved).then(
    (stats) => stats.bavail * stats.bsize,
    () => undefined,
  );
  if (free !== undefined && free < neededBytes + MARGIN_BYTES) {
    throw new DiskFullError(
      `${resolved}: not enough free space for the ${role}: ${formatBytes(free)} free, the planned audio needs about ${formatBytes(neededBytes + MARGIN_BYTES)}; ` +
        'free some space, choose another folder or build fewer dialogues (--limit)',
      resolved,
      neededBytes + MARGIN_BYTES,
      free,
    );
  }
}
