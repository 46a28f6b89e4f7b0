/**
 * The names of the reference corpus formats, apart from their loaders (./reference-corpora.ts), so the
 * command line can offer them as choices without loading any reader.
 */

/** The reference corpus formats, in documentation order. */
export const REFERENCE_CORPUS_FORMATS = [
  'stereo-wav',
  'candor',
  'magicdata',
  'rttm',
  'm3-events',
  'nxt',
  'textgrid',
  'ctm',
] as const;

/** One of {@link REFERENCE_CORPUS_FORMATS}. */
export type ReferenceCorpusFormat = (typeof REFERENCE_CORPUS_FORMATS)[number];
