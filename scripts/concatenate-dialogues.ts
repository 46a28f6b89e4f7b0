/**
 * Long two-party recordings from a benchmark dataset folder (our own synthesized MT-QA dialogues), as
 * input for `duplexsynth chat` when no real recording is long enough: consecutive dialogues (id
 * order) are joined, with a silence between them, into one stereo WAV plus one NIST CTM file of the
 * words (from `txt_align`), channel A = channel 0, B = channel 1.
 *
 *     npx tsx scripts/concatenate-dialogues.ts --dataset outputs/x/data/en/task/topiocqa \
 *       --out recordings/ [--per-recording 3] [--gap 2] [--name synthetic]
 *
 * Writes `<out>/<name>-<k>.wav` and `<out>/<name>-<k>.ctm` (k = 1, 2, ...), atomically. The voices
 * change at each dialogue boundary (each synthetic dialogue has its own speaker pair); the CTM names
 * no speakers, so each recording's channels count as two speakers of their own.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { decodeWav, encodeWavPcm16 } from '../pipeline/audio/wav.ts';
import { parseAlignment, parseEventsLine } from '../pipeline/events/index.ts';
import type { AlignedWord } from '../pipeline/model/types.ts';
import { writeAtomic } from '../pipeline/storage/write-atomic.ts';

/** Options of {@link concatenateDialogues}. */
export interface ConcatenateOptions {
  /** Dialogues per recording. Default 3. */
  perRecording?: number;
  /** Silence between two dialogues, seconds (a multiple of 0.01). Default 2. */
  gapSeconds?: number;
  /** File name stem. Default `synthetic`. */
  name?: string;
}

/** `1234` -> `12.34`. */
function seconds(centiseconds: number): string {
  return `${Math.floor(centiseconds / 100)}.${String(centiseconds % 100).padStart(2, '0')}`;
}

/**
 * Joins the dialogues of a dataset folder into long recordings (module comment).
 * @param dataset folder with `all.jsonl`, `audio/{id}.wav` (2 channels), `txt_align/{id}.txt`.
 * @param out folder to write into (created).
 * @returns the written WAV and CTM paths, per recording, and the dialogue ids each holds.
 * @throws Error naming the file when a WAV is not 2-channel, sample rates differ, or a file is unreadable;
 *   AlignmentParseError / EventsLineParseError naming file and line.
 */
export async function concatenateDialogues(
  dataset: string,
  out: string,
  options: ConcatenateOptions = {},
): Promise<{ wav: string; ctm: string; dialogues: string[] }[]> {
  const perRecording = options.perRecording ?? 3;
  const gap = Math.round((options.gapSeconds ?? 2) * 100);
  const name = options.name ?? 'synthetic';
  if (!Number.isSafeInteger(perRecording) || perRecording < 1)
    throw new RangeError(`perRecording ${perRecording} is not a positive integer`);
  const jsonl = path.join(dataset, 'all.jsonl');
  const ids = (await readFile(jsonl, 'utf8'))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => parseEventsLine(line, `${jsonl}:${index + 1}`).id)
    .sort();
  const written: { wav: string; ctm: string; dialogues: string[] }[] = [];
  for (let first = 0; first < ids.length; first += perRecording) {
    const group = ids.slice(first, first + perRecording);
    const stem = `${name}-${written.length + 1}`;
    const channels: Float32Array[][] = [[], []];
    const words: AlignedWord[] = [];
    let sampleRate: number | undefined;
    let offset = 0;
    for (const [index, id] of group.entries()) {
      const file = path.join(dataset, 'audio', `${id}.wav`);
      const audio = decodeWav(await readFile(file), file);
      if (audio.channels.length !== 2) throw new Error(`${file}: ${audio.channels.length} channels, expected 2`);
      if (sampleRate !== undefined && audio.sampleRate !== sampleRate)
        throw new Error(`${file}: ${audio.sampleRate} Hz, the others ${sampleRate} Hz`);
      sampleRate = audio.sampleRate;
      const length = (audio.channels[0] as Float32Array).length;
      if (length % (sampleRate / 100) !== 0)
        throw new Error(`${file}: ${length} samples is not a whole number of centiseconds at ${sampleRate} Hz`);
      const silence = new Float32Array(index < group.length - 1 ? (gap * sampleRate) / 100 : 0);
      for (const channel of [0, 1] as const) channels[channel]!.push(audio.channels[channel] as Float32Array, silence);
      const alignment = path.join(dataset, 'txt_align', `${id}.txt`);
      for (const word of parseAlignment(await readFile(alignment, 'utf8'), alignment))
        words.push({ ...word, start: word.start + offset, end: word.end + offset });
      offset += (length * 100) / sampleRate + (index < group.length - 1 ? gap : 0);
    }
    const joined = channels.map((parts) => {
      const total = new Float32Array(parts.reduce((sum, part) => sum + part.length, 0));
      let position = 0;
      for (const part of parts) {
        total.set(part, position);
        position += part.length;
      }
      return total;
    });
    const wav = path.join(out, `${stem}.wav`);
    const ctm = path.join(out, `${stem}.ctm`);
    await writeAtomic(wav, encodeWavPcm16({ channels: joined, sampleRate: sampleRate as number }));
    const lines = [
      `;; ${stem}: dialogues ${group.join(', ')} of ${dataset}, joined with ${seconds(gap)} s of silence (scripts/concatenate-dialogues.ts)`,
      ...[...words]
        .sort((a, b) => a.channel - b.channel || a.start - b.start || a.end - b.end)
        .map(
          (word) =>
            `${stem} ${word.channel === 0 ? 'A' : 'B'} ${seconds(word.start)} ${seconds(word.end - word.start)} ${word.word.replace(/\s+/g, '_')}`,
        ),
    ];
    await writeAtomic(ctm, `${lines.join('\n')}\n`);
    written.push({ wav, ctm, dialogues: group });
  }
  return written;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({
    options: {
      dataset: { type: 'string' },
      out: { type: 'string' },
      'per-recording': { type: 'string' },
      gap: { type: 'string' },
      name: { type: 'string' },
    },
  });
  if (values.dataset === undefined || values.out === undefined) {
    console.error(
      'usage: npx tsx scripts/concatenate-dialogues.ts --dataset DIR --out DIR [--per-recording N] [--gap SECONDS] [--name STEM]',
    );
    process.exit(2);
  }
  const result = await concatenateDialogues(values.dataset, values.out, {
    ...(values['per-recording'] === undefined ? {} : { perRecording: Number(values['per-recording']) }),
    ...(values.gap === undefined ? {} : { gapSeconds: Number(values.gap) }),
    ...(values.name === undefined ? {} : { name: values.name }),
  });
  for (const recording of result) console.log(`${recording.wav} ${recording.ctm} (${recording.dialogues.join(', ')})`);
}
