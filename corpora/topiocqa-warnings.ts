/**
 * The loader's warnings: one human-readable line per kind of quirk found, with counts, in a fixed
 * order, and one for the conversations skipped as invalid.
 */
import type {
  ResolvedTopiocqaOptions,
  TopiocqaQuirk,
  TopiocqaQuirkKind,
  TopiocqaRejection,
} from './topiocqa-format.ts';

const QUIRK_ORDER: readonly TopiocqaQuirkKind[] = [
  'unanswerable',
  'empty-answer',
  'question-without-question-mark',
  'control-characters-removed',
  'whitespace-normalised',
  'missing-topic',
  'turns-out-of-order',
  'context-mismatch',
  'additional-answer-left-out',
  'unknown-field',
  'dropped-turn',
  'dropped-conversation',
];

/** One line per quirk kind (in `QUIRK_ORDER`) and one for the rejected conversations. */
export function summariseQuirks(
  quirks: TopiocqaQuirk[],
  rejected: TopiocqaRejection[],
  options: ResolvedTopiocqaOptions,
): string[] {
  const byKind = new Map<TopiocqaQuirkKind, TopiocqaQuirk[]>();
  for (const quirk of quirks) {
    const list = byKind.get(quirk.kind);
    if (list) list.push(quirk);
    else byKind.set(quirk.kind, [quirk]);
  }
  const countBy = (list: TopiocqaQuirk[], key: (quirk: TopiocqaQuirk) => string): string =>
    [...countValues(list.map(key))].map(([value, count]) => `${value} ${count}`).join(', ');
  const conversationsOf = (list: TopiocqaQuirk[]): number => new Set(list.map((q) => q.conversationNumber)).size;

  const warnings: string[] = [];
  for (const kind of QUIRK_ORDER) {
    const list = byKind.get(kind);
    if (!list) continue;
    const n = list.length;
    switch (kind) {
      case 'unanswerable': {
        const action =
          options.unanswerable === 'keep'
            ? 'kept with answer null and answerable false'
            : options.unanswerable === 'drop-turn'
              ? 'turns dropped and the rest renumbered'
              : 'their conversations dropped';
        warnings.push(`${n} turns answered UNANSWERABLE in ${conversationsOf(list)} conversations: ${action}`);
        break;
      }
      case 'empty-answer': {
        const final = list.filter((q) => q.detail === 'final turn').length;
        warnings.push(
          `${n} turns with an empty answer: answer null (${final} final turns, ${n - final} earlier turns)`,
        );
        break;
      }
      case 'question-without-question-mark':
        warnings.push(`${n} questions without "?": kept as they are`);
        break;
      case 'control-characters-removed':
        warnings.push(`${n} text fields had control characters removed (${countBy(list, (q) => q.field ?? '')})`);
        break;
      case 'whitespace-normalised':
        warnings.push(
          `${n} text fields had Unicode or repeated spaces normalised (${countBy(list, (q) => q.field ?? '')})`,
        );
        break;
      case 'missing-topic':
        warnings.push(`${n} turns without a topic: topic "", never counted as a topic switch`);
        break;
      case 'turns-out-of-order':
        warnings.push(`${n} conversations had their turns out of order in the file: sorted by Turn_no`);
        break;
      case 'context-mismatch':
        warnings.push(`${n} turns whose Context does not repeat the earlier turns: Context ignored`);
        break;
      case 'additional-answer-left-out':
        warnings.push(`${n} additional answers were UNANSWERABLE or empty: left out`);
        break;
      case 'unknown-field':
        warnings.push(`${n} unknown record fields ignored (${countBy(list, (q) => q.field ?? '')})`);
        break;
      case 'dropped-turn':
        warnings.push(`${n} turns dropped by the unanswerable policy "${options.unanswerable}"`);
        break;
      case 'dropped-conversation':
        warnings.push(`${n} conversations dropped by the unanswerable policy "${options.unanswerable}"`);
        break;
    }
  }
  if (rejected.length > 0) {
    warnings.push(
      `${rejected.length} invalid conversations skipped: ${rejected.map((r) => r.conversationNumber).join(', ')}`,
    );
  }
  return warnings;
}

function countValues(values: string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
