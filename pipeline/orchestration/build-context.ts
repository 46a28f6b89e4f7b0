/**
 * The types a build's modules share: what a build returns (`BuildReport`), its logger, the hook a
 * queued build paces it with, and `BuildContext`, the one named object the build's steps are given
 * instead of a list of positional arguments.
 */
import type { BuildConfig } from '../config.ts';
import type { DatasetSummary } from '../model/dataset-summary.ts';
import type { Language } from '../model/types.ts';
import type { PreRenderedDialoguePages } from '../report/pre-rendered-pages.ts';
import type { LogLevel, ProgressListener } from '../run/progress.ts';
import type { StageRunner } from '../run/stage-runner.ts';
import type { ContentCache } from '../storage/content-cache.ts';
import type { IngestedCorpus } from '../../stages/ingest-corpus.ts';

/** What a build returns (timings and cache use are also written to build-status.ts `runRecordFile`). */
export interface BuildReport {
  outputDirectory: string;
  summaryMarkdownPath: string;
  /** The HTML report's index.html, or null when it could not be written (the reason is logged). */
  reportPath: string | null;
  datasets: DatasetSummary[];
  failedDialogues: number;
  /** Wall-clock seconds per stage, summed over dialogues (not deterministic; for `npm run bench`). */
  stageSeconds: Record<string, number>;
  /** Seconds of dialogue audio written. */
  audioSeconds: number;
  cache: ContentCache['statistics'];
}

/** Logger for progress lines (stderr in the CLI); `warn` for a dialogue or a step that failed while the build goes on. */
export type BuildLog = (line: string, level?: LogLevel) => void;

/**
 * How a queued build (./queued-build.ts) paces the local pass: each dialogue starts once the workers
 * are done with its job, and no dataset is committed before every job (scoring included) is done.
 */
export interface BuildQueueHook {
  /**
   * Resolves when the workers finished the dialogue's job, or failed it for good (the local pass then
   * makes the dialogue itself and quarantines it if it fails again).
   * @throws BuildStoppedError (Redis gone too long, Ctrl-C): the build stops and its uncommitted
   *   datasets are discarded
   */
  dialogueReady(language: Language, id: string): Promise<void>;
  /** Resolves when every job of every language is done; awaited before the first commit. @throws as dialogueReady */
  beforeCommit(): Promise<void>;
}

/** What the locked part of a build works with, once the corpus is ingested and the settings checked. */
export interface BuildContext {
  config: BuildConfig;
  corpus: IngestedCorpus;
  runner: StageRunner;
  /** Progress lines, API keys redacted. */
  log: BuildLog;
  /** A dataset may replace one with more dialogues. */
  allowShrink: boolean;
  progress: ProgressListener;
  /** Set when the build is queued (./queued-build.ts). */
  queueHook: BuildQueueHook | null;
  /** The queued build's config hash (./build-queue.ts `buildConfigHash`): the workers' dialogue records are stored under keys made with it. */
  queueConfigHash: string | null;
  /** Told each output as soon as it is written to stay. */
  kept: (output: string) => void;
}

/** A {@link BuildContext} with the report's pages the build makes while it runs (null: none, a scored build). */
export interface BuildWithPagesContext extends BuildContext {
  preRendered: PreRenderedDialoguePages | null;
}
