/**
 * Markdown reference tables of schema keys (scripts/docs/zod-keys.ts rows): one row per key with its
 * type, default, meaning and an example, one table per union variant. Defaults are written as JSON in
 * backticks, so a reader (and the docs test) finds each key's default on its row.
 */
import type { SchemaKeyRow } from './zod-keys.ts';

/** A value as written in a table cell: JSON in backticks. */
export function codeValue(value: unknown): string {
  return `\`${JSON.stringify(value)}\``;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function defaultCell(row: SchemaKeyRow): string {
  if (row.hasDefault) return codeValue(row.default);
  if (row.path.endsWith('>')) return '—'; // an entry of a map: there as often as the map has keys
  return row.optional ? 'unset' : 'required';
}

function exampleCell(row: SchemaKeyRow): string {
  if (row.example === undefined) return '';
  const name = row.path.slice(row.path.lastIndexOf('.') + 1);
  return `\`${name}: ${JSON.stringify(row.example)}\``;
}

/** One table of rows (no heading). */
export function keyTable(rows: readonly SchemaKeyRow[]): string {
  const lines = ['| Key | Type | Default | Meaning | Example |', '| --- | --- | --- | --- | --- |'];
  for (const row of rows) {
    lines.push(
      `| \`${row.path}\` | ${cell(row.type)} | ${cell(defaultCell(row))} | ${cell(row.description)} | ${cell(exampleCell(row))} |`,
    );
  }
  return lines.join('\n');
}

/**
 * Tables of `rows` grouped by variant: the rows outside any variant first, then one table per variant
 * under a `heading` of the given level, in the order the variants first appear.
 */
export function keyTables(rows: readonly SchemaKeyRow[], headingLevel: number): string {
  const groups = new Map<string, SchemaKeyRow[]>();
  for (const row of rows) {
    const group = groups.get(row.variant) ?? [];
    group.push(row);
    groups.set(row.variant, group);
  }
  const parts: string[] = [];
  for (const [variant, group] of groups) {
    if (variant !== '') parts.push(`${'#'.repeat(headingLevel)} ${variant.replace(/^(\S+) with /, '`$1` with ')}`);
    parts.push(keyTable(group));
  }
  return parts.join('\n\n');
}
