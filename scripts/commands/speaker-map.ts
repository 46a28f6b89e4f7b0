/**
 * `--speaker-map FILE` of `chat`, `prompts` and `measure`: who speaks on a recording's channel, when
 * the corpus does not say it across recordings (stereo-wav's `<recording>:<channel>`, CTM's
 * `<file>:<channel>`, RTTM's per-call labels). The same person in several recordings then has one id,
 * which the speaker-disjoint split (chat) and the per-speaker clip limit (prompts) rely on.
 *
 * The file is tab-separated, one line per recording channel, `#` lines and blank lines skipped:
 *
 *     # recording	channel	speaker
 *     call-0412	0	spk-017
 *     call-0412	B	spk-023      (the corpus's own label of the channel's speaker works too)
 *
 * `channel` is 0 or 1, or the speaker label the corpus gives that channel.
 */
import { parse } from 'csv-parse/sync';
import type { Channel, ReferenceRecording } from '../../pipeline/model/types.ts';
import { readTextFile, ReferenceCorpusError } from '../../corpora/reference-recording.ts';

/** One mapping line. */
export interface SpeakerMapEntry {
  recording: string;
  /** `0`, `1` or the corpus's label of the channel's speaker. */
  channel: string;
  speaker: string;
  line: number;
}

/**
 * Reads a speaker map (module comment).
 * @throws ReferenceCorpusError naming the file and line of a malformed line or a channel given twice.
 */
export async function readSpeakerMap(file: string): Promise<SpeakerMapEntry[]> {
  const text = await readTextFile(file, 'speaker map');
  const rows = parse(text, {
    delimiter: '\t',
    relax_column_count: true,
    skip_empty_lines: true,
    comment: '#',
    info: true,
    trim: true,
  }) as unknown as { record: string[]; info: { lines: number } }[];
  const seen = new Set<string>();
  return rows.map(({ record, info }) => {
    const [recording, channel, speaker] = record;
    if (record.length !== 3 || !recording || !channel || !speaker)
      throw new ReferenceCorpusError(
        file,
        { line: info.lines },
        `expected 3 tab-separated fields (recording, channel, speaker), got ${record.length}`,
      );
    const key = `${recording}\u0000${channel}`;
    if (seen.has(key))
      throw new ReferenceCorpusError(
        file,
        { line: info.lines },
        `recording ${recording} channel ${channel} is mapped twice`,
      );
    seen.add(key);
    return { recording, channel, speaker, line: info.lines };
  });
}

/**
 * The recordings with their channel speakers (and their supervisions' speakers) replaced as the map
 * says; channels the map does not name keep the corpus's id.
 * @returns new recordings (the input is not changed) and how many channels were mapped.
 * @throws ReferenceCorpusError naming the map file and line when a line names no recording or channel
 *   of the input, or when both channels of a recording would get the same speaker.
 */
export function applySpeakerMap<R extends ReferenceRecording>(
  recordings: readonly R[],
  entries: readonly SpeakerMapEntry[],
  file: string,
): { recordings: R[]; mapped: number } {
  const byId = new Map(recordings.map((recording) => [recording.id, recording]));
  const assigned = new Map<string, Record<Channel, string>>();
  for (const entry of entries) {
    const recording = byId.get(entry.recording);
    if (recording === undefined)
      throw new ReferenceCorpusError(
        file,
        { line: entry.line },
        `no recording ${JSON.stringify(entry.recording)} among the ${recordings.length} read`,
      );
    const isLabelOf = (channel: Channel) =>
      [entry.channel, `${recording.id}:${entry.channel}`].includes(recording.channelSpeakers[channel]);
    const channel: Channel | undefined =
      entry.channel === '0' ? 0 : entry.channel === '1' ? 1 : isLabelOf(0) ? 0 : isLabelOf(1) ? 1 : undefined;
    if (channel === undefined)
      throw new ReferenceCorpusError(
        file,
        { line: entry.line },
        `recording ${recording.id} has no channel ${JSON.stringify(entry.channel)} (0, 1, ${recording.channelSpeakers[0]}, ${recording.channelSpeakers[1]})`,
      );
    const speakers = assigned.get(recording.id) ?? { ...recording.channelSpeakers };
    speakers[channel] = entry.speaker;
    assigned.set(recording.id, speakers);
  }
  let mapped = 0;
  const result = recordings.map((recording): R => {
    const speakers = assigned.get(recording.id);
    if (speakers === undefined) return recording;
    if (speakers[0] === speakers[1])
      throw new ReferenceCorpusError(
        file,
        {},
        `recording ${recording.id}: both channels would be speaker ${JSON.stringify(speakers[0])}`,
      );
    mapped +=
      (speakers[0] !== recording.channelSpeakers[0] ? 1 : 0) + (speakers[1] !== recording.channelSpeakers[1] ? 1 : 0);
    return {
      ...recording,
      channelSpeakers: speakers,
      ...(recording.supervisions === undefined
        ? {}
        : {
            supervisions: recording.supervisions.map((supervision) => ({
              ...supervision,
              speaker: speakers[supervision.channel],
            })),
          }),
      notes: [
        ...recording.notes,
        `speakers from the speaker map: channel 0 = ${speakers[0]}, channel 1 = ${speakers[1]}`,
      ],
    };
  });
  return { recordings: result, mapped };
}
