/**
 * The script of a dialogue's speech: each turn's question (user) then its answer (system), a share of
 * the questions in two parts around a TURN_HOLD pause, and the backchannel phrases of the listener.
 */
import type { DialogueText, Language, ScriptUtterance } from '../pipeline/model/types.ts';
import { dialogueRandomStream } from '../pipeline/model/random.ts';
import { planTurnHolds, type QuestionParts } from '../pipeline/text/turn-hold-split.ts';

/**
 * The utterances to speak, in order: each turn's question (user), then its answer (system) when it
 * has one. A turn without an answer (the source's final question without answer) ends the dialogue
 * with its question. A turn in `holds` has its question spoken in two parts (`part` 1 and 2), so the
 * timeline puts a TURN_HOLD pause between them.
 */
export function dialogueScript(
  text: DialogueText,
  holds: ReadonlyMap<number, QuestionParts> = new Map(),
): ScriptUtterance[] {
  const utterances: ScriptUtterance[] = [];
  for (const turn of text.final) {
    const parts = holds.get(turn.turnNumber);
    if (parts) {
      utterances.push({
        index: utterances.length,
        turnNumber: turn.turnNumber,
        kind: 'question',
        role: 'user',
        text: parts.first,
        part: 1,
      });
      utterances.push({
        index: utterances.length,
        turnNumber: turn.turnNumber,
        kind: 'question',
        role: 'user',
        text: parts.second,
        part: 2,
      });
    } else
      utterances.push({
        index: utterances.length,
        turnNumber: turn.turnNumber,
        kind: 'question',
        role: 'user',
        text: turn.question,
      });
    if (turn.answer !== null)
      utterances.push({
        index: utterances.length,
        turnNumber: turn.turnNumber,
        kind: 'answer',
        role: 'system',
        text: turn.answer,
      });
  }
  return utterances;
}

/** What {@link plannedScript} plans from: one dialogue's text and the build's TURN_HOLD settings. */
export interface ScriptRequest {
  dialogueId: string;
  text: DialogueText;
  /** Per turn number, the phrases a TURN_HOLD split must not fall inside; none when absent. */
  protectedPhrases?: ReadonlyMap<number, readonly string[]> | undefined;
  language: Language;
  /** The build seed (the choice of split questions is drawn from the dialogue's `turn-holds` stream). */
  seed: number;
  /** Share of the questions spoken in two parts, in [0, 1]. */
  turnHoldShare: number;
}

/** The script with its planned TURN_HOLD splits. @throws RangeError for a share outside [0, 1] */
export async function plannedScript(
  request: ScriptRequest,
): Promise<{ holds: Map<number, QuestionParts>; script: ScriptUtterance[] }> {
  const holds = await planTurnHolds(
    request.text.final.map((turn) => ({
      turnNumber: turn.turnNumber,
      question: turn.question,
      protectedPhrases: request.protectedPhrases?.get(turn.turnNumber) ?? [],
      pausePoint: turn.pausePoint,
    })),
    request.language,
    request.turnHoldShare,
    dialogueRandomStream(request.seed, request.dialogueId, 'turn-holds'),
  );
  return { holds, script: dialogueScript(request.text, holds) };
}

/** The backchannel phrases as script utterances of the user, in phrase order (turn number 0). */
export function backchannelScript(phrases: readonly string[]): ScriptUtterance[] {
  return phrases.map((text, position) => ({ index: position, turnNumber: 0, kind: 'backchannel', role: 'user', text }));
}
