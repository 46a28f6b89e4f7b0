/**
 * eSpeak NG backend (Debian package `espeak-ng`): formant synthesis, 22050 Hz mono, English here
 * (it cannot read kanji, so it is not used for Japanese). Gives no word or phoneme times.
 */
import { z } from 'zod';
import type { Language, SpeakerRole } from '../../model/types.ts';
import { findLanguagePack, knownLanguageCodes } from '../../model/language-pack.ts';
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

export const ESPEAK_NG_ENGINE_ID = 'espeak-ng';

/**
 * espeak-ng voice settings.
 * - `voice`: `-v`, a voice name with an optional variant, e.g. `en-us+m3` (variants m1..m7, f1..f5, ...).
 * - `pitch`: `-p`, base pitch 0..99 (espeak-ng default 50).
 * - `speed`: `-s`, words per minute 80..450 (espeak-ng default 175).
 */
export const espeakNgVoiceSchema = z.object({
  voice: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_+-]*$/, 'a voice name like en-us+m3'),
  pitch: z.number().int().min(0).max(99),
  speed: z.number().int().min(80).max(450),
});
export type EspeakNgVoice = z.infer<typeof espeakNgVoiceSchema>;

/**
 * Two distinct English speakers: the user a lower male variant (m3, pitch 40, 165 wpm), the system a
 * female variant (f3, pitch 60, 160 wpm). Chosen by ear for being clearly different voices.
 */
export const ESPEAK_NG_DEFAULT_VOICES: Readonly<Record<SpeakerRole, EspeakNgVoice>> = Object.freeze({
  user: Object.freeze({ voice: 'en-us+m3', pitch: 40, speed: 165 }),
  system: Object.freeze({ voice: 'en-us+f3', pitch: 60, speed: 160 }),
});

/** Where to find the program. */
export interface EspeakNgOptions {
  /** Program name or path; default `espeak-ng` (looked up on PATH). */
  binary: string;
}

const DEFAULT_ESPEAK_NG_OPTIONS: EspeakNgOptions = { binary: 'espeak-ng' };

/** espeak-ng behind the {@link SpeechSynthesizer} seam. Create it with {@link createEspeakNgSynthesizer}. */
export class EspeakNgSynthesizer implements SpeechSynthesizer {
  readonly id = ESPEAK_NG_ENGINE_ID;
  /** English and every language whose language pack names espeak-ng as its offline engine. */
  get languages(): readonly Language[] {
    return knownLanguageCodes().filter(
      (code) => code === 'en' || findLanguagePack(code)?.offlineVoice.engine === 'espeak-ng',
    );
  }

  constructor(
    readonly version: string,
    private readonly options: EspeakNgOptions,
  ) {}

  /**
   * Runs `espeak-ng --stdout -b 1 -v VOICE -p PITCH -s SPEED` with the text on standard input (UTF-8,
   * whitespace collapsed; never on the command line, so text starting with `-` is safe) and decodes the
   * WAV it writes to standard output (22050 Hz mono 16-bit).
   *
   * @returns mono audio at 22050 Hz, no engine timings.
   * @throws SpeechSynthesisError `unsupported-language` (not English), `empty-text`, `invalid-voice`,
   *   `missing-binary`, `non-zero-exit`, `invalid-output` (stdout is not WAV), `empty-audio` (no
   *   samples or only digital silence).
   */
  async synthesize(request: SynthesisRequest): Promise<SynthesisOutput> {
    const text = normalizeWhitespace(request.text);
    if (!this.languages.includes(request.language)) {
      throw new SpeechSynthesisError(
        this.id,
        request.text,
        'unsupported-language',
        `language "${request.language}" is not supported (only ${this.languages.join(', ')})`,
      );
    }
    if (!text) throw new SpeechSynthesisError(this.id, request.text, 'empty-text', 'the text is empty');
    const voice = parseVoice(this.id, request.text, espeakNgVoiceSchema, request.voice);
    const args = ['--stdout', '-b', '1', '-v', voice.voice, '-p', String(voice.pitch), '-s', String(voice.speed)];
    const { stdout } = await runEngineProcess(this.id, this.options.binary, args, text, request.text);
    let mono: Float32Array;
    let sampleRate: number;
    try {
      const audio = decodeWav(stdout, `${this.options.binary} standard output`);
      mono = downmixToMono(audio);
      sampleRate = audio.sampleRate;
    } catch (error) {
      if (error instanceof WavDecodeError)
        throw new SpeechSynthesisError(this.id, request.text, 'invalid-output', error.message, { cause: error });
      throw error;
    }
    if (!mono.some((sample) => sample !== 0)) {
      throw new SpeechSynthesisError(
        this.id,
        request.text,
        'empty-audio',
        `espeak-ng produced ${mono.length} samples of silence`,
      );
    }
    return { audio: { channels: [mono], sampleRate } };
  }
}

/**
 * Checks that espeak-ng runs and reads its version (`espeak-ng --version` -> `espeak-ng 1.51`).
 *
 * @throws SpeechSynthesisError `missing-binary` (with the `npm run setup` hint) when the program is not
 *   installed, `non-zero-exit` when it fails, `invalid-output` when the version line is unreadable.
 */
export async function createEspeakNgSynthesizer(options: Partial<EspeakNgOptions> = {}): Promise<EspeakNgSynthesizer> {
  const resolved = { ...DEFAULT_ESPEAK_NG_OPTIONS, ...options };
  const { stdout } = await runEngineProcess(ESPEAK_NG_ENGINE_ID, resolved.binary, ['--version'], '', '');
  const match = /text-to-speech:\s*(\S+)/.exec(Buffer.from(stdout).toString('utf8'));
  if (!match?.[1])
    throw new SpeechSynthesisError(
      ESPEAK_NG_ENGINE_ID,
      '',
      'invalid-output',
      'cannot read the version from `espeak-ng --version`',
    );
  return new EspeakNgSynthesizer(`espeak-ng ${match[1]}`, resolved);
}

/**
 * The voice names espeak-ng has, what `-v` takes before a `+variant`, lower-cased (espeak-ng matches
 * them in any case), read from `espeak-ng --voices`: the `Language` column (`de`, `cmn`, `en-us`,
 * `fr-fr`), the names of its `Other Languages` column (`(fr 5)`: `fr`, which `-v fr` selects), and the
 * voice file, by its path under the voices folder (`roa/fr`) and its name (`fr`, `fr-be`), which `-v`
 * also takes. So a pack naming a language espeak-ng lists only as an alias or a file is found.
 * @throws SpeechSynthesisError `missing-binary` when espeak-ng is not installed
 */
export async function espeakNgVoiceNames(binary: string = DEFAULT_ESPEAK_NG_OPTIONS.binary): Promise<Set<string>> {
  const { stdout } = await runEngineProcess(ESPEAK_NG_ENGINE_ID, binary, ['--voices'], '', '');
  return parseEspeakNgVoices(Buffer.from(stdout).toString('utf8'));
}

/**
 * The voice names of an `espeak-ng --voices` listing (see {@link espeakNgVoiceNames}).
 * @param listing the listing: a header line, then `Pty Language Age/Gender VoiceName File (alias pty)…`.
 * @returns lower-case names.
 */
export function parseEspeakNgVoices(listing: string): Set<string> {
  const names = new Set<string>();
  for (const line of listing.split('\n').slice(1)) {
    const columns = line.trim().split(/\s+/);
    const [, language, , , file] = columns;
    if (language) names.add(language.toLowerCase());
    if (file && !file.startsWith('(')) {
      names.add(file.toLowerCase());
      names.add(file.slice(file.lastIndexOf('/') + 1).toLowerCase());
    }
    for (const [, alias] of line.matchAll(/\(([^\s()]+) \d+\)/g)) if (alias) names.add(alias.toLowerCase());
  }
  return names;
}
