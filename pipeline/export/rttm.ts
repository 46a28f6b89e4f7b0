/**
 * Export as RTTM (NIST Rich Transcription Time Marked, the RT-09 evaluation plan's appendix; the
 * 10-field lines that NIST SCTK's `rttmValidator.pl`, dscore, pyannote and lhotse's
 * `SupervisionSet.from_rttm` read). One file `{id}.rttm` per dialogue:
 *
 *     SPKR-INFO <file> 1 <NA> <NA> <NA> unknown <speaker> <NA> <NA>      one per speaker, first
 *     SPEAKER <file> 1 <onset> <duration> <NA> <NA> <speaker> <NA> <NA>  one per speech segment
 *
 * - `SPKR-INFO` declares each speaker (its subtype is `adult_male`, `adult_female`, `child` or
 *   `unknown`: synthetic voices are `unknown`); `rttmValidator.pl` refuses a `SPEAKER` line whose
 *   speaker no `SPKR-INFO` line declares, unless run with `-p`.
 * - The speaker name is `{role}_{speaker id}` (role `user`/`system`; chat: `channel0`/`channel1`),
 *   so the file says who asks and who answers. Every character but letters, digits, `_`, `:` and `-`
 *   becomes `_`: `rttmValidator.pl` matches a SPEAKER line's name against each SPKR-INFO name used
 *   as a Perl regular expression (`find_speaker`: `/^$name$/i`), so `espeak-ng:en-us+m4` would
 *   never match itself; the role prefix keeps the two names of a dialogue apart.
 * - Speech segments are a TURN or BC span minus its SHORTPAUSEs (the segments the events were
 *   computed from, docs/events.md "Speech segments from words and from events"), sorted by onset;
 *   one speaker's segments never overlap (the validator's check). The channel field is 1, as dscore
 *   requires for these one-file recordings; the channel is known from the speaker. Onset and
 *   duration have 2 decimals (the data are centiseconds).
 * `corpora/rttm.ts` reads these files back (round-trip test).
 */
import { segmentsFromEvents } from '../events/index.ts';
import type { Centiseconds, Channel } from '../model/types.ts';
import type { ExportDataset, ExportDialogue } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';

function twoDecimals(centiseconds: Centiseconds): string {
  return `${Math.floor(centiseconds / 100)}.${String(centiseconds % 100).padStart(2, '0')}`;
}

/** The RTTM speaker name of each channel: `{role}_{speaker id}`, each character but letters, digits, `_`, `:`, `-` replaced by `_` (module comment). */
export function rttmSpeakerLabels(
  dataset: Pick<ExportDataset, 'roles'>,
  dialogue: Pick<ExportDialogue, 'speakers'>,
): Record<Channel, string> {
  const label = (channel: Channel) =>
    `${dataset.roles[channel]}_${dialogue.speakers[channel]}`.replace(/[^\p{L}\p{N}_:-]/gu, '_');
  return { 0: label(0), 1: label(1) };
}

/** The RTTM text of one dialogue (lines end in `\n`): the SPKR-INFO lines (channel order), then the SPEAKER lines by onset. */
export function dialogueRttm(dataset: Pick<ExportDataset, 'roles'>, dialogue: ExportDialogue): string {
  const labels = rttmSpeakerLabels(dataset, dialogue);
  const segments = segmentsFromEvents(dialogue.events);
  const rows = ([0, 1] as Channel[])
    .flatMap((channel) => segments[channel].map((segment) => ({ channel, ...segment })))
    .sort((a, b) => a.start - b.start || a.channel - b.channel);
  return [
    ...([0, 1] as Channel[]).map(
      (channel) => `SPKR-INFO ${dialogue.id} 1 <NA> <NA> <NA> unknown ${labels[channel]} <NA> <NA>\n`,
    ),
    ...rows.map(
      (row) =>
        `SPEAKER ${dialogue.id} 1 ${twoDecimals(row.start)} ${twoDecimals(row.end - row.start)} <NA> <NA> ${labels[row.channel]} <NA> <NA>\n`,
    ),
  ].join('');
}

/** Writes `{id}.rttm` per dialogue. */
export async function writeRttmExport(dataset: ExportDataset, writer: ExportWriter): Promise<Record<string, unknown>> {
  for (const dialogue of dataset.dialogues) await writer.write(`${dialogue.id}.rttm`, dialogueRttm(dataset, dialogue));
  return {
    files: dataset.dialogues.length,
    segments: 'TURN/BC spans minus SHORTPAUSE',
    speakers: '{role}_{speaker id}, declared by SPKR-INFO lines',
  };
}
