/**
 * Export as RTTM (NIST Rich Transcription Time Marked; the 10-field `SPEAKER` lines that dscore,
 * pyannote and lhotse's `SupervisionSet.from_rttm` read):
 *
 *     SPEAKER <file> 1 <onset> <duration> <NA> <NA> <speaker> <NA> <NA>
 *
 * One file `{id}.rttm` per dialogue; one line per speech segment (a TURN or BC span minus its
 * SHORTPAUSEs: the segments the events were computed from, events.md "Conformance vectors"), sorted
 * by onset. The channel field is 1, as dscore requires for these one-file recordings; the speaker
 * field is the speaker id from the metadata (whitespace replaced by `_`), so the channel is known from
 * the speaker. Onset and duration are written with 2 decimals (the data are centiseconds).
 * `corpora/rttm.ts` reads these files back (round-trip test).
 */
import { segmentsFromEvents } from '../events/index.ts';
import type { Centiseconds, Channel } from '../model/types.ts';
import type { ExportDataset, ExportDialogue } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';

function twoDecimals(centiseconds: Centiseconds): string {
  return `${Math.floor(centiseconds / 100)}.${String(centiseconds % 100).padStart(2, '0')}`;
}

/** The RTTM speaker label of each channel: the speaker id with whitespace replaced; role-suffixed when both ids are equal. */
export function rttmSpeakerLabels(dataset: Pick<ExportDataset, 'roles'>, dialogue: Pick<ExportDialogue, 'speakers'>): Record<Channel, string> {
  const clean = (text: string) => text.replace(/\s+/g, '_');
  const [first, second] = [clean(dialogue.speakers[0]), clean(dialogue.speakers[1])];
  return first === second ? { 0: `${first}/${dataset.roles[0]}`, 1: `${second}/${dataset.roles[1]}` } : { 0: first, 1: second };
}

/** The RTTM text of one dialogue (lines end in `\n`). */
export function dialogueRttm(dataset: Pick<ExportDataset, 'roles'>, dialogue: ExportDialogue): string {
  const labels = rttmSpeakerLabels(dataset, dialogue);
  const segments = segmentsFromEvents(dialogue.events);
  const rows = ([0, 1] as Channel[])
    .flatMap((channel) => segments[channel].map((segment) => ({ channel, ...segment })))
    .sort((a, b) => a.start - b.start || a.channel - b.channel);
  return rows
    .map((row) => `SPEAKER ${dialogue.id} 1 ${twoDecimals(row.start)} ${twoDecimals(row.end - row.start)} <NA> <NA> ${labels[row.channel]} <NA> <NA>\n`)
    .join('');
}

/** Writes `{id}.rttm` per dialogue. */
export async function writeRttmExport(dataset: ExportDataset, writer: ExportWriter): Promise<Record<string, unknown>> {
  for (const dialogue of dataset.dialogues) await writer.write(`${dialogue.id}.rttm`, dialogueRttm(dataset, dialogue));
  return { files: dataset.dialogues.length, segments: 'TURN/BC spans minus SHORTPAUSE' };
}
