/** Speech activity -> benchmark events (docs/events.md), and the files that carry them. */
export {
  buildIpus,
  CHANNELS,
  computeEvents,
  DEFAULT_EVENT_THRESHOLDS,
  SegmentValidationError,
  turnRelations,
  validateSegments,
  type EventThresholds,
  type Ipu,
  type TimeSpan,
  type TurnRelation,
  type TurnRelationType,
} from './rules.ts';
export {
  BENCHMARK_EVENT_TYPES,
  EventsLineParseError,
  formatEventsLine,
  formatSeconds,
  parseEventsLine,
} from './jsonl.ts';
export {
  AlignmentParseError,
  formatAlignment,
  parseAlignment,
  segmentsFromEvents,
  segmentsFromWords,
} from './alignment.ts';
export { AnnotateError, annotateAlignmentFile } from './annotate.ts';
