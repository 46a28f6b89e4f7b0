/**
 * The speakers a build's dialogues draw from, per language: the two configured voices
 * (`tts.{lang}.voices`), the voice prompts of a speaker prompt manifest (`tts.{lang}.speakerPrompts`),
 * or the engine's offline roster.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { BuildConfig } from '../config.ts';
import { ConfigError, ttsOf } from '../config.ts';
import type { Language, SpeakerRole } from '../model/types.ts';
import { languagePackOf } from '../model/language-pack.ts';
import { speakerPromptLineSchema, type SpeakerPromptLine } from '../model/speaker-prompt.ts';
import { parseRecord } from '../storage/json-records.ts';
import { DEFAULT_VOICES } from '../services/tts/synthesizer-registry.ts';
import type { SpeechSynthesizer, VoiceSettings } from '../services/tts/speech-synthesizer.ts';
import { offlineSpeakerRosterOf, type SpeakerIdentity } from '../services/tts/offline-speaker-roster.ts';
import { guessTranscriptLanguage, voicePromptRoster } from '../services/tts/voice-prompt.ts';
import { voiceRecordOf } from '../services/tts/voice-files.ts';
import {
  DEFAULT_SPEECH_RATE_BOUNDS,
  plausibleDurationRange,
  spokenLength,
} from '../services/tts/synthesis-speech-rate.ts';
import { readWavFileLayout } from '../audio/wav.ts';
import { describeFileSystemError } from '../storage/file-system-errors.ts';

/**
 * A language's speakers: a fixed pair (the same in every dialogue), or identities each dialogue draws
 * its pair from. Identities whose voice names files carry `voiceRecord` (voice-files.ts).
 */
export interface SpeakerRoster {
  fixed?: Record<SpeakerRole, SpeakerIdentity>;
  identities: readonly SpeakerIdentity[];
}

/**
 * The speaker identities dialogues draw from: the two configured voices (`tts.{lang}.voices`, the same
 * pair in every dialogue), the speakers of a voice prompt manifest (in pairs: an odd one out is left
 * unused) or, by default, the engine's offline roster. Voice prompt files are read once here for
 * their sha256 (`voiceRecord`: what metadata records instead of this machine's paths).
 * @throws ConfigError for a manifest line its schema refuses (naming file and line), a manifest with
 *   fewer than two speakers, an engine that has no default voices, or a voice prompt file that cannot
 *   be read; the read error of a missing manifest
 */
export function speakerRoster(language: Language, config: BuildConfig, synthesizer: SpeechSynthesizer): SpeakerRoster {
  const configured = ttsOf(config, language).voices;
  if (configured) {
    // a fixed voice's files are recorded relative to the config's folder, the one they were written against
    const identity = (role: SpeakerRole): SpeakerIdentity => {
      const voice = configured[role];
      const voiceRecord = recordOf(voice, config.baseDirectory, `tts.${language}.voices.${role}`);
      return { speakerId: `${synthesizer.id}:${canonicalVoice(voiceRecord)}`, voice, voiceRecord };
    };
    const fixed = { user: identity('user'), system: identity('system') };
    return { fixed, identities: [fixed.user, fixed.system] };
  }
  const prompts = ttsOf(config, language).speakerPrompts;
  if (prompts) {
    const root = path.dirname(prompts.manifest);
    const identities = voicePromptRoster(readSpeakerPromptManifest(prompts.manifest), root, {
      engine: synthesizer.id as 'cosyvoice2',
      mode: prompts.mode,
    }).map((identity) => ({
      ...identity,
      // a pool's clips are recorded relative to its manifest, as the manifest names them
      voiceRecord: recordOf(identity.voice, root, `${prompts.manifest}: prompt ${String(identity.voice.promptId)}`),
    }));
    // speaker groups are pairs: an odd speaker out is left unused
    const usable = identities.slice(0, identities.length - (identities.length % 2));
    if (usable.length < 2)
      throw new ConfigError(
        `tts.${language}.speakerPrompts: ${prompts.manifest} has ${identities.length} speaker(s); at least two are needed`,
      );
    return { identities: usable };
  }
  const engine = Object.hasOwn(DEFAULT_VOICES, language)
    ? DEFAULT_VOICES[language]?.engine
    : languagePackOf(language).offlineVoice.engine;
  if (engine !== synthesizer.id) {
    throw new ConfigError(
      `tts.${language}: ${synthesizer.id} needs voices (tts.${language}.voices) or voice prompts (tts.${language}.speakerPrompts)`,
    );
  }
  return { identities: offlineSpeakerRosterOf(language) };
}

/**
 * The lines of a speaker prompt manifest (JSONL, one speaker prompt per line; blank lines skipped).
 * @throws ConfigError naming `{manifest}:{line}` and the field for a line its schema refuses; the read
 *   error (ENOENT …) of a manifest that cannot be read
 */
export function readSpeakerPromptManifest(manifest: string): SpeakerPromptLine[] {
  return readFileSync(manifest, 'utf8')
    .split('\n')
    .map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => line.trim().length > 0)
    .map(({ line, number }) =>
      parseRecord(
        line,
        `${manifest}:${number}`,
        speakerPromptLineSchema,
        (message) => new ConfigError(`${message} (a speaker prompt manifest line)`),
      ),
    );
}

/**
 * {@link voiceRecordOf}: the voice with its files by relative path and sha256.
 * @throws ConfigError naming `where` and the file when a file cannot be read
 */
function recordOf(voice: VoiceSettings, root: string, where: string): VoiceSettings {
  try {
    return voiceRecordOf(voice, root);
  } catch (error) {
    throw new ConfigError(`${where}: ${describeFileSystemError(error, String(voice.promptWav), 'voice prompt')}`);
  }
}

/** A voice's settings as `key=value` pairs sorted by key (its part of a fixed speaker's id). */
function canonicalVoice(voice: VoiceSettings): string {
  return Object.keys(voice)
    .sort()
    .map((key) => `${key}=${String(voice[key])}`)
    .join(',');
}

/**
 * Check the voice prompts a build will send (the clip the roster picks per speaker of
 * `tts.{lang}.speakerPrompts`) before any request: each WAV must last what its manifest line says
 * (within `durationTolerance`, default ± 5 %), and its transcript must fit that duration at a human
 * speaking rate (synthesis-speech-rate.ts bounds: English 5-24 letters/s, Japanese 3-13 morae/s, plus
 * pause allowances). A truncated clip with a long transcript makes a voice-cloning model speak
 * garbage for every request that uses it.
 * @throws ConfigError naming the manifest, the prompt id, its WAV, the field and the limit
 */
export async function checkSpeakerPromptClips(language: Language, config: BuildConfig): Promise<void> {
  const prompts = config.tts[language]?.speakerPrompts;
  if (!prompts) return;
  const lines = readSpeakerPromptManifest(prompts.manifest);
  const byId = new Map(lines.map((line) => [line.id, line]));
  const setting = `tts.${language}.speakerPrompts`;
  for (const identity of voicePromptRoster(lines, path.dirname(prompts.manifest))) {
    const line = byId.get(String(identity.voice.promptId))!;
    const wav = String(identity.voice.promptWav);
    const where = `${prompts.manifest}: prompt ${line.id} (${wav})`;
    let layout: ReturnType<typeof readWavFileLayout>;
    try {
      layout = readWavFileLayout(wav);
    } catch (error) {
      throw new ConfigError(`${where}: ${describeFileSystemError(error, wav, 'voice prompt')}`);
    }
    if (layout === undefined || layout.format.blockAlign <= 0 || layout.format.sampleRate <= 0)
      throw new ConfigError(`${where}: not a WAV file with a fmt and a data chunk`);
    const seconds = layout.dataBytes / layout.format.blockAlign / layout.format.sampleRate;
    const tolerance = prompts.durationTolerance;
    if (Math.abs(seconds - line.durationSeconds) > tolerance * line.durationSeconds) {
      throw new ConfigError(
        `${where}: field "durationSeconds": the WAV lasts ${seconds.toFixed(2)} s, the manifest says ${line.durationSeconds} s ` +
          `(more than the ${Math.round(tolerance * 100)} % allowed, ${setting}.durationTolerance); the clip was cut or replaced: cut the pool again (duplexsynth prompts)`,
      );
    }
    const transcriptLanguage = guessTranscriptLanguage(line.text);
    const bounds = DEFAULT_SPEECH_RATE_BOUNDS[transcriptLanguage];
    if (bounds === undefined) continue; // no speaking-rate bounds for that language: the duration check above is all
    const length = await spokenLength(line.text, transcriptLanguage);
    const range = plausibleDurationRange(length, bounds);
    if (seconds < range.minimumSeconds || seconds > range.maximumSeconds) {
      throw new ConfigError(
        `${where}: field "text": ${length.units} ${length.unit} of transcript need ${range.minimumSeconds.toFixed(2)}-${range.maximumSeconds.toFixed(2)} s of speech, ` +
          `the clip lasts ${seconds.toFixed(2)} s; the transcript is not the clip's (fix the manifest line or cut the pool again)`,
      );
    }
  }
}
