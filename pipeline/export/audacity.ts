/**
 * Export as Audacity label tracks (Audacity manual, "Importing and Exporting Labels", standard
 * format): one tab-separated line per label, `start<TAB>end<TAB>text`, seconds written with six
 * decimals as Audacity itself writes them; a point label has start = end. Audacity imports one file as
 * one label track (File > Import > Labels), so each dialogue gets three files:
 *
 * ```
 * {id}.system-words.txt   words (Japanese: morphemes) of the system's channel
 * {id}.user-words.txt     words of the user's channel
 * {id}.events.txt         benchmark events, text "TYPE (channel N)"
 * ```
 * (chat data: `{id}.channel0-words.txt` and `{id}.channel1-words.txt`)
 * A region label cannot run backwards, so a TURN_SHIFT whose start is after its end (an overlapping
 * shift, docs/events.md step 3) is written as the region [end, start] with ", overlap" in its text.
 * Import the dataset's WAV (`audio/{id}.wav`) next to them.
 */
import type { Centiseconds, Channel } from '../model/types.ts';
import type { ExportDataset, ExportDialogue } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';

/** One Audacity label. */
export interface AudacityLabel {
  start: Centiseconds;
  end: Centiseconds;
  text: string;
}

/** Centiseconds -> seconds with six decimals (`1234` -> `12.340000`). */
function sixDecimals(centiseconds: Centiseconds): string {
  return `${Math.floor(centiseconds / 100)}.${String(centiseconds % 100).padStart(2, '0')}0000`;
}

/**
 * The text of a label file.
 * @throws RangeError for a label whose text holds a tab or line break, or whose end is before its start
 */
export function formatAudacityLabels(labels: readonly AudacityLabel[]): string {
  return labels
    .map((label, index) => {
      if (/[\t\r\n]/.test(label.text))
        throw new RangeError(`label ${index}: text ${JSON.stringify(label.text)} holds a tab or line break`);
      if (label.end < label.start)
        throw new RangeError(`label ${index}: end ${label.end} is before start ${label.start}`);
      return `${sixDecimals(label.start)}\t${sixDecimals(label.end)}\t${label.text}\n`;
    })
    .join('');
}

/** The three label tracks of one dialogue. */
export function dialogueAudacityLabels(
  dataset: Pick<ExportDataset, 'roles'>,
  dialogue: ExportDialogue,
): Record<string, AudacityLabel[]> {
  const wordsOf = (channel: Channel) =>
    dialogue.words
      .filter((word) => word.channel === channel)
      .sort((a, b) => a.start - b.start || a.end - b.end)
      .map((word) => ({ start: word.start, end: word.end, text: word.word }));
  const events = ([0, 1] as Channel[])
    .flatMap((channel) =>
      dialogue.events[channel].map((event) =>
        event.start > event.end
          ? { start: event.end, end: event.start, text: `${event.event} (channel ${channel}, overlap)` }
          : { start: event.start, end: event.end, text: `${event.event} (channel ${channel})` },
      ),
    )
    .sort((a, b) => a.start - b.start || a.end - b.end);
  return { [`${dataset.roles[0]}-words`]: wordsOf(0), [`${dataset.roles[1]}-words`]: wordsOf(1), events };
}

/** Writes the three label files of every dialogue. */
export async function writeAudacityExport(
  dataset: ExportDataset,
  writer: ExportWriter,
): Promise<Record<string, unknown>> {
  for (const dialogue of dataset.dialogues) {
    const tracks = dialogueAudacityLabels(dataset, dialogue);
    for (const [name, labels] of Object.entries(tracks))
      await writer.write(`${dialogue.id}.${name}.txt`, formatAudacityLabels(labels));
  }
  return {
    filesPerDialogue: [`${dataset.roles[0]}-words`, `${dataset.roles[1]}-words`, 'events'].map(
      (name) => `{id}.${name}.txt`,
    ),
  };
}
