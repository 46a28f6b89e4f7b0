/**
 * Rosters of distinct speaker identities for the offline engines, so that dialogues do not all share
 * the same two voices: each dialogue draws one speaker group (two identities: its user and its system
 * speaker) from the roster of its language, from a random stream seeded by (build seed, dialogue id). Distinct
 * speakers across dialogues are what makes a speaker-disjoint dev/test split possible
 * (docs/dataset-format.md, "{split}.jsonl": "the rest is dev, kept speaker-disjoint from test").
 *
 * - English (espeak-ng): 12 voice variants (espeak-ng's `m1`–`m7` male and `f1`–`f5` female
 *   variants of `en-us`) at two pitch levels = 24 identities.
 * - Japanese (Open JTalk, one HTS voice): 5 pitch shifts × 2 all-pass constants (formant scaling)
 *   × 2 speaking rates = 20 identities.
 */
import type { Language, SpeakerRole } from '../../model/types.ts';
import { languagePackOf } from '../../model/language-pack.ts';
import { dialogueRandomStream } from '../../model/random.ts';
import type { VoiceSettings } from './speech-synthesizer.ts';

/** One speaker identity: a stable id (used for speaker-disjoint splits) and its voice settings. */
export interface SpeakerIdentity {
  speakerId: string;
  /** What the engine is given (file fields such as `promptWav` absolute, to be read by this process). */
  voice: VoiceSettings;
  /**
   * The voice as dataset metadata records it, when it names files: each as its path relative to the
   * folder it was configured under, with its sha256 (voice-files.ts `voiceRecordOf`). Absent: `voice`.
   */
  voiceRecord?: VoiceSettings;
}

function englishRoster(): SpeakerIdentity[] {
  const variants = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'f1', 'f2', 'f3', 'f4', 'f5'];
  const roster: SpeakerIdentity[] = [];
  for (const variant of variants) {
    for (const pitch of [40, 60]) {
      roster.push({
        speakerId: `espeak-ng:en-us+${variant}:p${pitch}`,
        voice: { voice: `en-us+${variant}`, pitch, speed: 160 },
      });
    }
  }
  return roster;
}

function japaneseRoster(): SpeakerIdentity[] {
  const roster: SpeakerIdentity[] = [];
  for (const halfToneShift of [-2, 0, 2, 4, 6]) {
    for (const allPass of [0.5, 0.55]) {
      for (const speed of [0.95, 1.05]) {
        roster.push({
          speakerId: `open-jtalk:nitech-m001:fm${halfToneShift}:a${allPass}:r${speed}`,
          voice: { halfToneShift, allPass, speed },
        });
      }
    }
  }
  return roster;
}

/** The roster of each language's offline engine. */
export const OFFLINE_SPEAKER_ROSTERS: Readonly<Record<Language, readonly SpeakerIdentity[]>> = Object.freeze({
  en: Object.freeze(englishRoster()),
  ja: Object.freeze(japaneseRoster()),
});

/**
 * The offline speaker roster of a language: {@link OFFLINE_SPEAKER_ROSTERS} for English and Japanese,
 * else from its language pack's espeak-ng voice: each variant (`de+m1` … `de+f5`) at pitch 40 and 60,
 * 160 words per minute, as the English roster.
 * @throws LanguagePackError for a language without a pack; Error when its offline engine is not espeak-ng
 */
export function offlineSpeakerRosterOf(language: Language): readonly SpeakerIdentity[] {
  const built = Object.hasOwn(OFFLINE_SPEAKER_ROSTERS, language) ? OFFLINE_SPEAKER_ROSTERS[language] : undefined;
  if (built) return built;
  const voice = languagePackOf(language).offlineVoice;
  if (voice.engine !== 'espeak-ng') throw new Error(`language ${language}: no offline roster for ${voice.engine}`);
  const roster: SpeakerIdentity[] = [];
  for (const variant of voice.variants) {
    for (const pitch of [40, 60])
      roster.push({
        speakerId: `espeak-ng:${voice.voice}+${variant}:p${pitch}`,
        voice: { voice: `${voice.voice}+${variant}`, pitch, speed: 160 },
      });
  }
  return roster;
}

/**
 * Speaker groups of a roster: disjoint pairs, identity `i` with identity `i + n/2` (for the shipped
 * rosters a lower with a higher voice). A dialogue takes both its speakers from one group, so the
 * dialogues of different groups share no speaker, and a split that assigns whole groups to test or dev
 * is speaker-disjoint while keeping dev non-empty (free pairing would link every dialogue to every other
 * through shared voices, and a speaker-disjoint dev set would come out empty).
 * @throws RangeError when the roster has an odd number of identities or fewer than two
 */
export function speakerGroups(roster: readonly SpeakerIdentity[]): [SpeakerIdentity, SpeakerIdentity][] {
  if (roster.length < 2 || roster.length % 2 !== 0)
    throw new RangeError(`a speaker roster needs an even number (>= 2) of identities, got ${roster.length}`);
  const half = roster.length / 2;
  return roster.slice(0, half).map((identity, index) => [identity, roster[index + half]!]);
}

/**
 * The two speakers of one dialogue: one speaker group drawn by the dialogue's own random stream
 * (`speakers`, independent of the timeline's stream), and which of the two is the user.
 * @throws RangeError as `speakerGroups`
 */
export function drawDialogueSpeakers(
  roster: readonly SpeakerIdentity[],
  seed: number,
  dialogueId: string,
): Record<SpeakerRole, SpeakerIdentity> {
  const groups = speakerGroups(roster);
  const stream = dialogueRandomStream(seed, dialogueId, 'speakers');
  const [first, second] = groups[stream.integer(0, groups.length - 1)]!;
  return stream.integer(0, 1) === 0 ? { user: first, system: second } : { user: second, system: first };
}
