/**
 * JSON text written the way Python's `json.dumps(value, ensure_ascii=False)` writes it, for files that
 * Python tools read and write themselves (lhotse's `save_to_jsonl`, moshi-finetune's `annotate.py`):
 * `", "` and `": "` separators, keys in insertion order, and floats told apart from integers (Python
 * writes `3.0` for a float, `3` for an int; JavaScript numbers do not say which, so a float is marked
 * with {@link pythonFloat}).
 *
 * Strings are escaped as `json.dumps` does with `ensure_ascii=False`: `"` `\` and control characters
 * only (JSON.stringify gives the same text for these).
 */

/** A number written as a Python float (`3.0`, `24.52`). Create with {@link pythonFloat}. */
export class PythonFloat {
  constructor(readonly value: number) {}
}

/** Marks `value` to be written as a Python float. */
export function pythonFloat(value: number): PythonFloat {
  return new PythonFloat(value);
}

/** A value {@link pythonJson} can write. */
export type PythonJsonValue =
  | null
  | boolean
  | number
  | string
  | PythonFloat
  | readonly PythonJsonValue[]
  | { readonly [key: string]: PythonJsonValue | undefined };

/**
 * Python's `repr` of a float for values written here (seconds, durations). Python and JavaScript both
 * print the shortest digits that round-trip; they differ only in the integer case (`3.0` vs `3`) and
 * in exponent notation (Python switches at 1e16 and below 1e-4), which is refused here rather than
 * guessed.
 * @throws RangeError for a non-finite value or one that Python would write in exponent notation
 */
export function pythonFloatText(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`cannot write ${value} as a JSON float`);
  const magnitude = Math.abs(value);
  if (magnitude >= 1e16 || (magnitude !== 0 && magnitude < 1e-4))
    throw new RangeError(`${value}: Python would use exponent notation; not supported`);
  const text = String(value + 0); // `+ 0` turns -0 into 0
  return text.includes('.') ? text : `${text}.0`;
}

/**
 * Serializes `value` as `json.dumps(value, ensure_ascii=False)` would (see the module comment).
 * Object keys whose value is `undefined` are left out (lhotse leaves out `None` fields).
 * @throws RangeError for a plain number that is not a safe integer (mark floats with {@link pythonFloat})
 */
export function pythonJson(value: PythonJsonValue): string {
  if (value === null) return 'null';
  if (value instanceof PythonFloat) return pythonFloatText(value.value);
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isSafeInteger(value))
        throw new RangeError(`${value} is not an integer; mark floats with pythonFloat()`);
      return String(value);
    case 'string':
      return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((item: PythonJsonValue) => pythonJson(item)).join(', ')}]`;
  const entries = Object.entries(value as Record<string, PythonJsonValue | undefined>).filter(
    ([, item]) => item !== undefined,
  );
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}: ${pythonJson(item as PythonJsonValue)}`).join(', ')}}`;
}
