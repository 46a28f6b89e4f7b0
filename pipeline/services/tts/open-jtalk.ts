/**
 * Open JTalk backend (Debian packages `open-jtalk`, `open-jtalk-mecab-naist-jdic`,
 * `hts-voice-nitech-jp-atr503-m001`): HMM synthesis of Japanese, 48 kHz mono, reads kanji and numbers.
 * One voice; distinct speakers come from the half-tone shift (`-fm`), all-pass constant (`-a`) and
 * speed (`-r`). Gives a phoneme trace with times (`-ot`).
 *
 * The `-ot` trace file has these sections (checked on Open JTalk 1.10 / hts_engine 1.10):
 * ```
 * [Text analysis result]
 * 今日,名詞,副詞可能,*,*,*,*,今日,キョウ,キョー,1/2,C3,0     <- one NJD word per line (surface, POS..., reading, pronunciation, accent/morae, ...)
 * ...
 * [Output label]
 * 0 3100000 xx^xx-sil+k=o/A:xx+xx+xx/B:...                  <- start end full-context label, times in 100 ns
 * 3100000 4350000 xx^sil-k+o=N/A:-4+1+5/B:...               <- the phoneme is between '-' and '+': here `k`
 * ...
 * [Global parameter]
 * Sampring frequency -> 48000(Hz) ...                        <- then model/duration details per HMM state
 * ```
 * Label times are multiples of the 5 ms frame period, follow `-r`, and the last label ends at the
 * audio's end. Phonemes: vowels `a i u e o`, devoiced vowels `A I U E O`, moraic nasal `N`, geminate
 * closure `cl`, pauses `pau` (at 、。), `sil` at both ends, consonants (`k ky g s sh ch ts ...`).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { EngineTiming, Language, SpeakerRole } from '../../model/types.ts';
import { downmixToMono, WavDecodeError } from '../../audio/raw-audio.ts';
import { decodeWav } from '../../audio/wav.ts';
import { runEngineProcess } from './engine-process.ts';
import {
  normalizeWhitespace,
  parseVoice,
  SpeechSynthesisError,
  type SpeechSynthesizer,
  type SynthesisOutput,
  type SynthesisRequest,
} from './speech-synthesizer.ts';

export const OPEN_JTALK_ENGINE_ID = 'open-jtalk';

/**
 * Open JTalk voice settings.
 * - `halfToneShift`: `-fm`, pitch shift in semitones (default 0).
 * - `allPass`: `-a`, all-pass (frequency warping) constant 0..1; 0.55 is the model's value at 48 kHz.
 *   Lower values move formants up (smaller-sounding speaker), higher values move them down.
 * - `speed`: `-r`, speech rate factor (1.0 = model's natural durations).
 */
export const openJtalkVoiceSchema = z.object({
  halfToneShift: z.number().min(-24).max(24),
  allPass: z.number().min(0).max(1),
  speed: z.number().min(0.5).max(2),
});
export type OpenJtalkVoice = z.infer<typeof openJtalkVoiceSchema>;

/**
 * Two distinct Japanese speakers from the one male voice: the user as the model was trained (no shift,
 * all-pass 0.55, rate 1.0), the system 4 semitones higher with all-pass 0.50 (formants up) at rate 1.1.
 */
export const OPEN_JTALK_DEFAULT_VOICES: Readonly<Record<SpeakerRole, OpenJtalkVoice>> = Object.freeze({
  user: Object.freeze({ halfToneShift: 0, allPass: 0.55, speed: 1.0 }),
  system: Object.freeze({ halfToneShift: 4, allPass: 0.5, speed: 1.1 }),
});

/** Where to find the program, its dictionary and its voice. */
export interface OpenJtalkOptions {
  /** Program name or path; default `open_jtalk` (looked up on PATH). */
  binary: string;
  /** MeCab dictionary directory (`-x`); default Debian's `/var/lib/mecab/dic/open-jtalk/naist-jdic`. */
  dictionaryDirectory: string;
  /** HTS voice file (`-m`); default Debian's nitech-jp-atr503-m001. */
  voicePath: string;
}

export const DEFAULT_OPEN_JTALK_OPTIONS: Readonly<OpenJtalkOptions> = Object.freeze({
  binary: 'open_jtalk',
  dictionaryDirectory: '/var/lib/mecab/dic/open-jtalk/naist-jdic',
  voicePath: '/usr/share/hts-voice/nitech-jp-atr503-m001/nitech_jp_atr503_m001.htsvoice',
});

/** Open JTalk label times are in units of 100 ns (HTK convention). */
const LABEL_TIME_UNITS_PER_SECOND = 10_000_000;

/**
 * Reads the phonemes and their times from an Open JTalk `-ot` trace (the `[Output label]` section).
 *
 * @param trace the whole trace file text.
 * @returns one timing per label, in order: `label` is the phoneme (`sil`, `k`, `o`, `N`, `cl`, `pau`,
 *   ...), `start`/`end` in seconds from the start of the synthesized audio.
 * @throws SyntaxError when the section is missing or a line does not look like `START END LABEL`.
 */
export function parseOpenJtalkTrace(trace: string): EngineTiming[] {
  const lines = trace.split(/\r?\n/);
  const sectionStart = lines.findIndex((line) => line.trim() === '[Output label]');
  if (sectionStart < 0) throw new SyntaxError('Open JTalk trace has no [Output label] section');
  const timings: EngineTiming[] = [];
  for (let index = sectionStart + 1; index < lines.length; index++) {
    const line = (lines[index] as string).trim();
    if (line === '') break;
    const match = /^(\d+) (\d+) [^^\s]+\^[^-\s]+-([^+\s]+)\+/.exec(line);
    if (!match)
      throw new SyntaxError(`Open JTalk trace line ${index + 1} is not "START END LABEL": ${line.slice(0, 80)}`);
    timings.push({
      label: match[3] as string,
      start: Number(match[1]) / LABEL_TIME_UNITS_PER_SECOND,
      end: Number(match[2]) / LABEL_TIME_UNITS_PER_SECOND,
    });
  }
  if (timings.length === 0) throw new SyntaxError('Open JTalk trace has an empty [Output label] section');
  return timings;
}

/** Open JTalk behind the {@link SpeechSynthesizer} seam. Create it with {@link createOpenJtalkSynthesizer}. */
export class OpenJtalkSynthesizer implements SpeechSynthesizer {
  readonly id = OPEN_JTALK_ENGINE_ID;
  readonly languages: readonly Language[] = ['ja'];

  constructor(
    readonly version: string,
    private readonly options: OpenJtalkOptions,
  ) {}

  /**
   * Runs `open_jtalk -x DIC -m VOICE -ow OUT.wav -ot TRACE.txt -fm N -a A -r R` with the text on standard
   * input (UTF-8, whitespace collapsed to single spaces: Open JTalk speaks only the first line) in a
   * fresh temporary directory, which is removed afterwards, also on failure.
   *
   * @returns mono audio at 48000 Hz and the phoneme trace ({@link parseOpenJtalkTrace}) as engine timings.
   * @throws SpeechSynthesisError `unsupported-language` (not Japanese), `empty-text`, `invalid-voice`,
   *   `missing-binary`, `non-zero-exit` (Open JTalk exits with 1 when the text has no phoneme, e.g. only
   *   punctuation), `invalid-output` (unreadable WAV or trace), `empty-audio`.
   */
  async synthesize(request: SynthesisRequest): Promise<SynthesisOutput> {
    const text = normalizeWhitespace(request.text);
    if (!this.languages.includes(request.language)) {
      throw new SpeechSynthesisError(
        this.id,
        request.text,
        'unsupported-language',
        `language "${request.language}" is not supported (only Japanese)`,
      );
    }
    if (!text) throw new SpeechSynthesisError(this.id, request.text, 'empty-text', 'the text is empty');
    const voice = parseVoice(this.id, request.text, openJtalkVoiceSchema, request.voice);
    const directory = await mkdtemp(join(tmpdir(), 'duplexsynth-open-jtalk-'));
    try {
      const wavPath = join(directory, 'speech.wav');
      const tracePath = join(directory, 'trace.txt');
      const args = [
        '-x',
        this.options.dictionaryDirectory,
        '-m',
        this.options.voicePath,
        '-ow',
        wavPath,
        '-ot',
        tracePath,
        '-fm',
        String(voice.halfToneShift),
        '-a',
        String(voice.allPass),
        '-r',
        String(voice.speed),
      ];
      await runEngineProcess(this.id, this.options.binary, args, `${text}\n`, request.text);
      let mono: Float32Array;
      let sampleRate: number;
      let engineTimings: EngineTiming[];
      try {
        const audio = decodeWav(await readFile(wavPath), `${this.options.binary} output ${wavPath}`);
        mono = downmixToMono(audio);
        sampleRate = audio.sampleRate;
        engineTimings = parseOpenJtalkTrace(await readFile(tracePath, 'utf8'));
      } catch (error) {
        if (error instanceof WavDecodeError || error instanceof SyntaxError || isFileSystemError(error)) {
          throw new SpeechSynthesisError(
            this.id,
            request.text,
            'invalid-output',
            error instanceof Error ? error.message : String(error),
            { cause: error },
          );
        }
        throw error;
      }
      if (!mono.some((sample) => sample !== 0)) {
        throw new SpeechSynthesisError(
          this.id,
          request.text,
          'empty-audio',
          `Open JTalk produced ${mono.length} samples of silence`,
        );
      }
      return { audio: { channels: [mono], sampleRate }, engineTimings };
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }
}

/**
 * Checks that Open JTalk, its dictionary and its voice are installed, and builds the version string
 * `open_jtalk 1.10; hts_engine 1.10; voice nitech_jp_atr503_m001.htsvoice sha256:0123456789ab; dictionary naist-jdic`
 * (the voice file's hash is part of it, so a different voice changes cache keys).
 *
 * @throws SpeechSynthesisError `missing-binary` (with the `npm run setup` hint) when the program, the
 *   dictionary directory (its `sys.dic`) or the voice file is missing; `invalid-output` when the version
 *   cannot be read from the program's usage text.
 */
export async function createOpenJtalkSynthesizer(
  options: Partial<OpenJtalkOptions> = {},
): Promise<OpenJtalkSynthesizer> {
  const resolved = { ...DEFAULT_OPEN_JTALK_OPTIONS, ...options };
  // Without arguments open_jtalk prints its usage (with versions) on standard error and exits 0.
  const { stdout, stderr } = await runEngineProcess(OPEN_JTALK_ENGINE_ID, resolved.binary, [], '', '');
  const usage = `${Buffer.from(stdout).toString('utf8')}\n${stderr}`;
  const openJtalkVersion = /"Open JTalk"\s*\n\s*Version (\S+)/.exec(usage)?.[1];
  const htsEngineVersion = /"hts_engine API"\s*\n\s*Version (\S+)/.exec(usage)?.[1];
  if (!openJtalkVersion)
    throw new SpeechSynthesisError(
      OPEN_JTALK_ENGINE_ID,
      '',
      'invalid-output',
      `cannot read the version from the usage text of "${resolved.binary}"`,
    );
  for (const [what, path] of [
    ['dictionary', join(resolved.dictionaryDirectory, 'sys.dic')],
    ['voice', resolved.voicePath],
  ] as const) {
    if (!(await isFile(path)))
      throw new SpeechSynthesisError(
        OPEN_JTALK_ENGINE_ID,
        '',
        'missing-binary',
        `the Open JTalk ${what} file ${path} does not exist`,
      );
  }
  const voiceHash = createHash('sha256')
    .update(await readFile(resolved.voicePath))
    .digest('hex')
    .slice(0, 12);
  const voiceName = resolved.voicePath.split('/').pop() ?? resolved.voicePath;
  const dictionaryName = resolved.dictionaryDirectory.split('/').filter(Boolean).pop() ?? resolved.dictionaryDirectory;
  const version = `open_jtalk ${openJtalkVersion}; hts_engine ${htsEngineVersion ?? 'unknown'}; voice ${voiceName} sha256:${voiceHash}; dictionary ${dictionaryName}`;
  return new OpenJtalkSynthesizer(version, resolved);
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

function isFileSystemError(error: unknown): boolean {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).code === 'string';
}
