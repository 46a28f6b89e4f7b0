/**
 * Registry of reference corpus loaders: format name -> loader. Every loader takes paths (and its own
 * options) and returns `ReferenceRecording[]` (../pipeline/model/types.ts), so timing statistics and
 * the speaker prompt pool never see a corpus format.
 *
 * | format       | paths                                               | file                       |
 * |--------------|-----------------------------------------------------|----------------------------|
 * | `stereo-wav` | folders / stereo WAV files / `<id>_0`,`<id>_1` pairs | corpora/stereo-wav.ts      |
 * | `candor`     | conversation folders or the corpus folder            | corpora/candor.ts          |
 * | `magicdata`  | corpus folders (`TXT/`, `WAV/`, `SPKINFO.txt`)       | corpora/magicdata.ts       |
 * | `rttm`       | `.rttm` files or folders of them                     | corpora/rttm-recordings.ts |
 * | `m3-events`  | benchmark dataset folders (`{split}.jsonl`, `txt_align/`) | corpora/m3-events.ts  |
 * | `nxt`        | folders of NXT `*.timed-units.xml` (one per speaker), or such files | corpora/nxt.ts |
 * | `textgrid`   | Praat `.TextGrid` files (a speaker tier each, MFA) or folders of them | corpora/textgrid.ts |
 * | `ctm`        | NIST CTM word timings (`.ctm` files or folders)      | corpora/ctm.ts             |
 */
import type { ReferenceRecording } from '../pipeline/model/types.ts';
import { prepareCandor, type CandorOptions } from './candor.ts';
import { prepareCtm, type CtmOptions } from './ctm.ts';
import { prepareM3Events, type M3EventsOptions } from './m3-events.ts';
import { prepareMagicData, type MagicDataOptions } from './magicdata.ts';
import { prepareNxt, type NxtOptions } from './nxt.ts';
import { prepareRttm, type RttmRecordingOptions } from './rttm-recordings.ts';
import { prepareStereoWav, type StereoWavOptions } from './stereo-wav.ts';
import { prepareTextGrid, type TextGridOptions } from './textgrid.ts';

import { REFERENCE_CORPUS_FORMATS, type ReferenceCorpusFormat } from './reference-corpus-formats.ts';

export { REFERENCE_CORPUS_FORMATS, type ReferenceCorpusFormat };

/** The options each format's loader takes (`stereo-wav` needs a voice activity detector). */
export interface ReferenceCorpusOptions {
  'stereo-wav': StereoWavOptions;
  candor: CandorOptions;
  magicdata: MagicDataOptions;
  rttm: RttmRecordingOptions;
  'm3-events': M3EventsOptions;
  nxt: NxtOptions;
  textgrid: TextGridOptions;
  ctm: CtmOptions;
}

/** A loader: paths in, recordings out. */
export type ReferenceCorpusLoader<Options> = (
  paths: readonly string[],
  options: Options,
) => Promise<ReferenceRecording[]>;

/** The loaders by format name. */
export const REFERENCE_CORPUS_LOADERS: Readonly<{
  [Format in ReferenceCorpusFormat]: ReferenceCorpusLoader<ReferenceCorpusOptions[Format]>;
}> = Object.freeze({
  'stereo-wav': (paths, options) => prepareStereoWav(paths, options),
  candor: (paths, options) => prepareCandor(paths, options),
  magicdata: (paths, options) => prepareMagicData(paths, options),
  rttm: (paths, options) => prepareRttm(paths, options),
  'm3-events': (paths, options) => prepareM3Events(paths, options),
  nxt: (paths, options) => prepareNxt(paths, options),
  textgrid: (paths, options) => prepareTextGrid(paths, options),
  ctm: (paths, options) => prepareCtm(paths, options),
});

/** True when `name` is one of {@link REFERENCE_CORPUS_FORMATS}. */
export function isReferenceCorpusFormat(name: string): name is ReferenceCorpusFormat {
  return (REFERENCE_CORPUS_FORMATS as readonly string[]).includes(name);
}

/** Options are optional for every format except those whose options have a required field. */
type OptionsArgument<Format extends ReferenceCorpusFormat> = object extends ReferenceCorpusOptions[Format]
  ? [options?: ReferenceCorpusOptions[Format]]
  : [options: ReferenceCorpusOptions[Format]];

/**
 * Loads a reference corpus by format name.
 *
 * @param format one of {@link REFERENCE_CORPUS_FORMATS}.
 * @param paths what the format's loader reads (see the table in the file comment).
 * @param options the format's options; required for `stereo-wav` (the detector).
 * @returns the recordings, in the loader's documented order.
 * @throws RangeError for an unknown format (listing the known ones); whatever the loader throws
 *   (ReferenceCorpusError and the parsers' errors, naming file and line/row/column).
 */
export function loadReferenceCorpus<Format extends ReferenceCorpusFormat>(
  format: Format,
  paths: readonly string[],
  ...[options]: OptionsArgument<Format>
): Promise<ReferenceRecording[]> {
  if (!isReferenceCorpusFormat(format)) {
    throw new RangeError(
      `unknown reference corpus format ${JSON.stringify(format)}; known: ${REFERENCE_CORPUS_FORMATS.join(', ')}`,
    );
  }
  const loader = REFERENCE_CORPUS_LOADERS[format] as ReferenceCorpusLoader<ReferenceCorpusOptions[Format] | undefined>;
  return loader(paths, options ?? ({} as ReferenceCorpusOptions[Format]));
}
