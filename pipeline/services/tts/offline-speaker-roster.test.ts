import { describe, expect, it } from 'vitest';
import { createSpeechSynthesizer } from './synthesizer-registry.ts';
import { drawDialogueSpeakers, OFFLINE_SPEAKER_ROSTERS, speakerGroups } from './offline-speaker-roster.ts';

describe('offline speaker rosters', () => {
  it('ids are unique and every voice is accepted by its engine', async () => {
    for (const [language, engine] of [
      ['en', 'espeak-ng'],
      ['ja', 'open-jtalk'],
    ] as const) {
      const roster = OFFLINE_SPEAKER_ROSTERS[language]!;
      expect(new Set(roster.map((speaker) => speaker.speakerId)).size).toBe(roster.length);
      expect(new Set(roster.map((speaker) => JSON.stringify(speaker.voice))).size).toBe(roster.length);
      const synthesizer = await createSpeechSynthesizer(engine);
      // two identities of the roster really sound different (different samples)
      const text = language === 'en' ? 'Hello there.' : 'こんにちは。';
      const [a, b] = await Promise.all(
        [roster[0]!, roster[roster.length - 1]!].map((speaker) =>
          synthesizer.synthesize({ text, language, voice: speaker.voice }),
        ),
      );
      expect(
        a!.audio.channels[0]!.length === b!.audio.channels[0]!.length &&
          a!.audio.channels[0]!.every((x, i) => x === b!.audio.channels[0]![i]),
      ).toBe(false);
    }
  });

  it('a dialogue gets two different speakers, deterministically, and dialogues spread over the roster', () => {
    const roster = OFFLINE_SPEAKER_ROSTERS.en!;
    const used = new Set<string>();
    for (let index = 1; index <= 200; index += 1) {
      const id = `topiocqa_dev_${String(index).padStart(4, '0')}`;
      const speakers = drawDialogueSpeakers(roster, 7, id);
      expect(speakers.user.speakerId).not.toBe(speakers.system.speakerId);
      expect(drawDialogueSpeakers(roster, 7, id)).toEqual(speakers);
      used.add(speakers.user.speakerId);
      used.add(speakers.system.speakerId);
    }
    expect(used.size).toBe(roster.length);
    expect(() => drawDialogueSpeakers(roster.slice(0, 1), 7, 'x')).toThrow(RangeError);
    expect(() => drawDialogueSpeakers(roster.slice(0, 3), 7, 'x')).toThrow(RangeError);
  });

  it('groups are disjoint pairs: two dialogues share either both speakers or none', () => {
    for (const roster of Object.values(OFFLINE_SPEAKER_ROSTERS)) {
      const groups = speakerGroups(roster);
      expect(groups).toHaveLength(roster.length / 2);
      expect(new Set(groups.flat().map((speaker) => speaker.speakerId)).size).toBe(roster.length);
      const pairs = Array.from({ length: 100 }, (_, index) => drawDialogueSpeakers(roster, 3, `d${index}`));
      for (const a of pairs) {
        for (const b of pairs) {
          const shared = [a.user.speakerId, a.system.speakerId].filter(
            (id) => id === b.user.speakerId || id === b.system.speakerId,
          ).length;
          expect([0, 2]).toContain(shared);
        }
      }
    }
  });
});
