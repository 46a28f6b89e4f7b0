/**
 * One line for a YAML syntax error, for messages of the form `{file}: not valid YAML: {line}`.
 *
 * The `yaml` package's messages are the error, ` at line L, column C:`, then a snippet of the source
 * with a caret on lines of their own; the first line alone ended with that colon, as if cut off
 * (seen in a `--json` error event). This keeps the first line without the colon that announced the
 * snippet.
 * @param error a `yaml` YAMLError (or any Error); its `message`
 * @returns e.g. `Implicit keys need to be on a single line at line 2, column 1`
 */
export function yamlErrorLine(error: { message: string }): string {
  return error.message.split('\n')[0]!.replace(/:\s*$/, '');
}
