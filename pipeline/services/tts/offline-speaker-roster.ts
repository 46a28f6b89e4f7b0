/**
 * Rosters of distinct speaker identities for the offline engines, so that dialogues do not all share
 * the same two voices: each dialogue draws its user and its system speaker (two different identities)
 * from the roster of its language, from a random stream seeded by (build seed, dialogue id). Distinct
 * speakers across dialogues are what makes a speaker-disjoint dev/test split possible
 * (m3-format.md: "the rest is the dev set, kept speaker-disjoint from test").
 *
 * - English (espeak-ng): 12 voice variants (espeak-ng's `m1`–`m7` male and `f1`–`f5` female
 *   variants of `en-us`) at two pitch levels = 24 identities.
 * - Japanese (Open JTalk, one HTS voice): 5 pitch shifts × 2 all-pass constants (formant scaling)
 *   × 2 speaking rates = 20 identities.
 */
import type { Language, SpeakerRole } from '../../model/types.ts';
import { dialogueRandomStream } from '../../timeline/random.ts';
import type { VoiceSettings } from './speech-synthesizer.ts';

/** One speaker identity: a stable id (used for speaker-disjoint splits) and its voice settings. */
export interface SpeakerIdentity {
  speakerId: string;
  voice: VoiceSettings;
}

function englishRoster(): SpeakerIdentity[] {
  const variants = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'f1', 'f2', 'f3', 'f4', 'f5'];
  const roster: SpeakerIdentity[] = [];
  for (const variant of variants) {
    for (const pitch of [40, 60]) {
      roster.push({ speakerId: `espeak-ng:en-us+${variant}:p${pitch}`, voice: { voice: `en-us+${variant}`, pitch, speed: 160 } });
    }
  }
  return roster;
}

function japaneseRoster(): SpeakerIdentity[] {
  const roster: SpeakerIdentity[] = [];
  for (const halfToneShift of [-2, 0, 2, 4, 6]) {
    for (const allPass of [0.5, 0.55]) {
      for (const speed of [0.95, 1.05]) {
        roster.push({ speakerId: `open-jtalk:nitech-m001:fm${halfToneShift}:a${allPass}:r${speed}`, voice: { halfToneShift, allPass, speed } });
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
 * The two speakers of one dialogue: two different identities drawn from `roster` by the dialogue's
 * own random stream (`speakers`), independent of the timeline's stream.
 * @throws RangeError when the roster has fewer than two identities
 */
export function drawDialogueSpeakers(
  roster: readonly SpeakerIdentity[],
  seed: number,
  dialogueId: string,
): Record<SpeakerRole, SpeakerIdentity> {
  if (roster.length < 2) throw new RangeError(`a speaker roster needs at least two identities, got ${roster.length}`);
  const stream = dialogueRandomStream(seed, dialogueId, 'speakers');
  const userIndex = stream.integer(0, roster.length - 1);
  let systemIndex = stream.integer(0, roster.length - 2);
  if (systemIndex >= userIndex) systemIndex += 1;
  return { user: roster[userIndex]!, system: roster[systemIndex]! };
}
