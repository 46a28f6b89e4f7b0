/**
 * Messages for TopiOCQA records that do not fit the raw schema: the deepest zod issue of a record
 * turned into one `TopiocqaFormatError` naming the conversation, turn and field, and the small value
 * descriptions the loader's messages share.
 */
import type { z } from 'zod';
import { INTEGER_FIELDS, TopiocqaFormatError } from './topiocqa-format.ts';

/** The `invalid-turn` error of a record: its first problem (the deepest branch of a union), and how many more there are. */
export function turnError(
  issues: readonly z.core.$ZodIssue[],
  record: Record<string, unknown>,
  recordIndex: number,
  conversationNumber: number,
  file: string,
): TopiocqaFormatError {
  const leaves = issues.map((issue) => leafIssue(issue, []));
  const first = leaves[0]!;
  const fieldPath = formatPath(first.path);
  const topField = String(first.path[0] ?? '');
  const value = valueAt(record, first.path);
  let expected: string;
  if (INTEGER_FIELDS.has(topField)) expected = 'a positive integer';
  else expected = describeExpected(first.issue);
  let detail = gotDetail(expected, value, INTEGER_FIELDS.has(topField));
  if (leaves.length > 1)
    detail += ` (and ${leaves.length - 1} more problem${leaves.length > 2 ? 's' : ''} in this record)`;
  const turnNumber = record['Turn_no'];
  return new TopiocqaFormatError({
    kind: 'invalid-turn',
    file,
    conversationNumber,
    ...(isPositiveInteger(turnNumber) ? { turnNumber } : { recordIndex }),
    field: fieldPath,
    detail,
  });
}

interface LeafIssue {
  path: PropertyKey[];
  issue: z.core.$ZodIssue;
}

/** For union failures, follows the branch that got deepest into the value (the one the data most likely meant). */
function leafIssue(issue: z.core.$ZodIssue, prefix: PropertyKey[]): LeafIssue {
  const fullPath = [...prefix, ...issue.path];
  let best: LeafIssue = { path: fullPath, issue };
  if (issue.code === 'invalid_union') {
    for (const branch of issue.errors) {
      for (const sub of branch) {
        const leaf = leafIssue(sub, fullPath);
        if (leaf.path.length > best.path.length) best = leaf;
      }
    }
  }
  return best;
}

function describeExpected(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type') return zodTypeName(issue.expected);
  if (issue.code === 'invalid_union') {
    const names = new Set<string>();
    for (const branch of issue.errors) {
      for (const sub of branch) {
        if (sub.path.length === 0 && sub.code === 'invalid_type') names.add(zodTypeName(sub.expected));
      }
    }
    if (names.size > 0) return [...names].join(' or ');
  }
  return issue.message;
}

function zodTypeName(expected: string): string {
  if (expected === 'array') return 'list';
  if (expected === 'int') return 'integer';
  return expected;
}

export function gotDetail(expected: string, value: unknown, showNumbers: boolean): string {
  if (value === undefined) return `missing (expected ${expected})`;
  return `expected ${expected}, got ${describeValue(value, showNumbers)}`;
}

export function describeValue(value: unknown, showNumbers = false): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'number' && showNumbers) return String(value);
  return typeof value;
}

function formatPath(parts: PropertyKey[]): string {
  let text = '';
  for (const part of parts) {
    if (typeof part === 'number') text += `[${part}]`;
    else text += text === '' ? String(part) : `.${String(part)}`;
  }
  return text;
}

function valueAt(root: unknown, parts: PropertyKey[]): unknown {
  let current: unknown = root;
  for (const part of parts) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[part];
  }
  return current;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0;
}
