/**
 * The coordinator's steps for one dialogue of a queued build: wait for the dialogue's job on the
 * workers, then write the dialogue, and its barge-in variant, from the record the worker stored in the
 * shared cache (./dialogue-record.ts) through the same `DatasetOutput.addRecord` a local build writes
 * its own records with, so both write the same bytes. No stage runs for a recorded dialogue. A
 * dialogue without a record (its job failed all its attempts) goes through the language's stages here,
 * as in a local build, and is quarantined as a local build quarantines it.
 */
import type { Language } from '../model/types.ts';
import { itemLogLine, failureText, type StageStep } from '../run/stage-runner.ts';
import type { ContentCache } from '../storage/content-cache.ts';
import type { BuildLog, BuildQueueHook } from './build-context.ts';
import type { DatasetOutput } from './dataset-output.ts';
import { DIALOGUE_RECORD_STAGE, dialogueRecordKey, readDialogueRecord } from './dialogue-record.ts';
import type { DialogueWork } from './dialogue-steps.ts';

/** A queued build's waits on its workers, and the error that stopped one (Redis gone, Ctrl-C). */
export class QueueWaits {
  /** The error that stopped a wait: the datasets being written are then discarded. */
  stop: unknown = undefined;

  /** Await `waiting`, remembering the first error it stops with. @throws what `waiting` throws */
  async wait(waiting: Promise<void>): Promise<void> {
    try {
      await waiting;
    } catch (error) {
      this.stop ??= error;
      throw error;
    }
  }
}

/** Name of the step that writes a dialogue from its record. */
export const MERGE_RECORD_STEP = 'merge-dialogue-record';

/**
 * The steps of a queued build's dialogue: wait, merge its record, then the language's steps, each
 * skipped for a dialogue written from its record (and started no earlier than the merge: in order).
 */
export function queuedDialogueSteps(run: {
  language: Language;
  queueHook: BuildQueueHook;
  queueWaits: QueueWaits;
  cache: ContentCache;
  configHash: string;
  base: DatasetOutput;
  variant: DatasetOutput | null;
  variantDataset: string;
  log: BuildLog;
  languageSteps: readonly StageStep<DialogueWork>[];
  /** The corpus's dialogue ids in order (for the log line's position). */
  ids: readonly string[];
}): StageStep<DialogueWork>[] {
  const positions = new Map(run.ids.map((id, position) => [id, position + 1]));
  const { language, queueHook, queueWaits, cache, configHash, base, variant, log } = run;
  const wait: StageStep<DialogueWork> = {
    name: 'wait-for-workers',
    cacheStages: [],
    startAhead: 'all',
    progress: null,
    run: async (work) => {
      await queueWaits.wait(queueHook.dialogueReady(language, work.conversation.id));
      return work;
    },
  };
  const merge: StageStep<DialogueWork> = {
    name: MERGE_RECORD_STEP,
    cacheStages: [DIALOGUE_RECORD_STAGE],
    startAhead: 0,
    progress: null,
    run: async (work) => {
      const record = await readDialogueRecord(cache, dialogueRecordKey(configHash, language, work.conversation));
      if (record === null) return work; // the job failed: the stages below make it here
      await base.addRecord(record.base);
      if (variant !== null && record.variant !== null) {
        if ('failed' in record.variant) {
          variant.failed.push({ id: work.conversation.id, ...record.variant.failed });
          log(
            itemLogLine(
              language,
              positions.get(work.conversation.id) ?? 0,
              run.ids.length,
              `${work.conversation.id} (${run.variantDataset})`,
              failureText(record.variant.failed),
            ),
            'warn',
          );
        } else await variant.addRecord(record.variant);
      }
      return { ...work, record };
    },
  };
  const skippable = run.languageSteps.map((step): StageStep<DialogueWork> => ({
    ...step,
    startAhead: 0,
    progress: null, // a recorded dialogue never reaches these stages' bars
    run: (work, context) => (work.record ? Promise.resolve(work) : step.run(work, context)),
  }));
  return [wait, merge, ...skippable];
}
