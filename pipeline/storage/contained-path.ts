/**
 * A name read from a file (a dialogue id from `all.jsonl`, a dataset name from `manifest.json`) that
 * becomes part of a path: the path is used only when it stays strictly inside the folder it is meant
 * for, so a dataset cannot make a command read or write files elsewhere (`../../x`, `/tmp/x`).
 */
import path from 'node:path';
import { BuildInputError } from '../model/build-errors.ts';

/** A name that goes into a path, and where it was read (named in the refusal). */
export interface PathName {
  /** The name as read, quoted in the refusal. */
  value: string;
  /** The file it was read from, with its line when it has one (`…/all.jsonl:3`). */
  file: string;
  /** The field holding it (`id`, `dataset`). */
  field: string;
  /**
   * Whether the name must be a file name, one segment of a path: no `/`, `\` or NUL, not empty,
   * `.` or `..` (default true; false for a relative path such as `data_stereo/{id}.wav`).
   */
  fileName?: boolean;
}

/** A name read from a file would make a path outside its folder, or is not a file name: exit code 2. */
export class PathOutsideFolderError extends BuildInputError {
  override name = 'PathOutsideFolderError';
}

/** Whether `candidate` (an absolute path) lies strictly inside the folder `root` (absolute), by its text. */
export function isInsideFolder(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative !== '' && relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}

/**
 * `relative` (made from `name.value`) resolved against the folder `root`.
 * @returns the absolute path, strictly inside `root`
 * @throws PathOutsideFolderError, one line naming the file, the field and the value, when the value is
 *   not a file name ({@link PathName.fileName}), holds a NUL character, or the path resolves outside
 *   `root` (or to `root` itself)
 */
export function containedPath(root: string, relative: string, name: PathName): string {
  const where = `${name.file}: ${name.field} ${JSON.stringify(name.value)}`;
  const fileName = name.fileName ?? true;
  if (
    relative.includes('\0') ||
    name.value.includes('\0') ||
    (fileName && (name.value === '' || name.value === '.' || name.value === '..' || /[/\\]/.test(name.value)))
  )
    throw new PathOutsideFolderError(
      `${where} is not a file name (it names files and folders: no "/", "\\" or NUL character, not "." or "..")`,
    );
  const absoluteRoot = path.resolve(root);
  const resolved = path.resolve(absoluteRoot, relative);
  if (!isInsideFolder(absoluteRoot, resolved))
    throw new PathOutsideFolderError(`${where} names ${resolved}, outside ${absoluteRoot}`);
  return resolved;
}
