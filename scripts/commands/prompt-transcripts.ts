/**
 * Texts for speaker prompts cut from speech without a transcript (`prompts --format stereo-wav`, or
 * RTTM turns with `--audio`): an OpenAI-compatible ASR service (`--asr-url`,
 * pipeline/services/asr/openai-transcription.ts) and/or a TSV a person fills in (`--transcripts`).
 *
 * Every run that cuts such clips writes `transcripts.tsv` into the pool folder: one row per clip,
 * with the text the ASR service gave (to correct) or empty (to fill in):
 *
 *     # comment lines
 *     id	speaker	recording	channel	start	end	path	text
 *     stereo-wav-call-0-129-524	call:0	call	0	1.29	5.24	clips/stereo-wav-call-0-129-524.wav	えっとですね…
 *
 * Run the same command again with `--transcripts FILE`: the same input and options cut the same clips
 * (the id names recording, channel and span), a row's non-empty text becomes the clip's text
 * (`transcribedBy: filled-in <file name>`; it wins over the ASR service, so corrections stick), and
 * a clip whose row is empty is sent to the ASR service when one is configured, else stays out of the
 * manifest. Rows naming no clip of this run are listed in the summary's `skipped`.
 */
import { parse } from 'csv-parse/sync';
import path from 'node:path';
import type { SpeakerPromptTranscriber } from '../../corpora/speaker-prompts.ts';
import { readTextFile, ReferenceCorpusError } from '../../corpora/reference-recording.ts';
import { OpenAITranscriber } from '../../pipeline/services/asr/openai-transcription.ts';
import { TranscriptionError } from '../../pipeline/services/asr/speech-transcriber.ts';
import { BuildInputError } from '../../pipeline/model/build-errors.ts';

/** File name of the fill-in TSV inside the pool folder. */
export const PROMPT_TRANSCRIPTS_FILE = 'transcripts.tsv';

/** Column names of the TSV, in order. */
export const PROMPT_TRANSCRIPT_COLUMNS = [
  'id',
  'speaker',
  'recording',
  'channel',
  'start',
  'end',
  'path',
  'text',
] as const;

/** One row of the TSV. */
export interface PromptTranscriptRow {
  id: string;
  speaker: string;
  recording: string;
  channel: number;
  /** Seconds. */
  start: number;
  end: number;
  /** `clips/<id>.wav`, relative to the pool folder. */
  path: string;
  /** '' when nobody has written it yet. */
  text: string;
}

/** A text as one TSV cell and one prompt text: whitespace runs (tabs, line breaks) become one space. */
export function normalizeTranscript(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * Reads a filled-in TSV (module comment).
 * @returns clip id -> text (rows with an empty text left out), with the line of each id.
 * @throws ReferenceCorpusError naming the file (and line) when the header lacks `id` or `text`, a row
 *   has no id, or an id appears twice.
 */
export async function readPromptTranscripts(file: string): Promise<Map<string, { text: string; line: number }>> {
  const content = await readTextFile(file, 'prompt transcripts');
  const rows = parse(content, {
    delimiter: '\t',
    quote: false,
    relax_column_count: true,
    skip_empty_lines: true,
    comment: '#',
    info: true,
    columns: true,
  }) as unknown as {
    record: Record<string, string | undefined>;
    info: { lines: number };
  }[];
  const header = rows[0] === undefined ? [] : Object.keys(rows[0].record);
  if (rows.length > 0 && (!header.includes('id') || !header.includes('text')))
    throw new ReferenceCorpusError(
      file,
      {},
      `the header must name the columns ${PROMPT_TRANSCRIPT_COLUMNS.join(', ')} (tab-separated); it names ${header.join(', ')}`,
    );
  const texts = new Map<string, { text: string; line: number }>();
  for (const { record, info } of rows) {
    const id = (record.id ?? '').trim();
    if (id === '') throw new ReferenceCorpusError(file, { line: info.lines }, 'a row without an id');
    if (texts.has(id))
      throw new ReferenceCorpusError(
        file,
        { line: info.lines },
        `clip ${id} appears twice (first on line ${texts.get(id)?.line})`,
      );
    texts.set(id, { text: normalizeTranscript(record.text ?? ''), line: info.lines });
  }
  for (const [id, entry] of texts) if (entry.text === '') texts.delete(id);
  return texts;
}

/** The TSV text (module comment) for the rows, in the order given. */
export function formatPromptTranscripts(rows: readonly PromptTranscriptRow[]): string {
  const lines = [
    '# Speaker prompt clips cut from speech without a transcript: write in "text" exactly what is said in the clip',
    '# (listen to "path"), then run the same prompts command again with --transcripts <this file>.',
    '# A clip with an empty text is never used as a voice prompt. Texts from an ASR service are here to correct.',
    PROMPT_TRANSCRIPT_COLUMNS.join('\t'),
    ...rows.map((row) =>
      [
        row.id,
        row.speaker,
        row.recording,
        String(row.channel),
        row.start.toFixed(2),
        row.end.toFixed(2),
        row.path,
        normalizeTranscript(row.text),
      ].join('\t'),
    ),
  ];
  return `${lines.join('\n')}\n`;
}

/** Options of {@link createPromptTranscriber}. */
export interface PromptTranscriberOptions {
  /** `--transcripts FILE`: the filled-in TSV. */
  transcripts?: string;
  /** `--asr-url`: base URL of the OpenAI-compatible service, e.g. `http://127.0.0.1:8000/v1`. */
  asrUrl?: string;
  /** `--asr-model`. */
  asrModel?: string;
  /** `--asr-language`: ISO-639-1 code sent with each clip. */
  asrLanguage?: string;
  /** `--asr-key-variable`: environment variable holding the API key. */
  asrKeyVariable?: string;
  /** `--asr-timeout`: seconds per request. */
  asrTimeout?: number;
}

/** What {@link createPromptTranscriber} made: the callback, what it is, and the TSV rows no clip used. */
export interface PromptTranscriber {
  transcribe: SpeakerPromptTranscriber;
  /** `asr openai-transcriptions <model>`, the TSV's name, both, or null when neither is configured. */
  description: string | null;
  /** After the pool is written: TSV rows whose id named no clip of the run, one line each. */
  unusedRows(): string[];
}

/**
 * The `transcribe` callback of the speaker prompt pool from the command's options.
 * @param environment where `--asr-key-variable` is looked up (default `process.env`).
 * @throws BuildInputError when `--asr-key-variable` names an unset or empty variable; the TSV
 *   reader's errors. The callback throws the TranscriptionError of a service that cannot transcribe
 *   anything as configured (401, 403, 404, unreachable after retries); another failure on one clip
 *   leaves that clip without text, its reason said.
 */
export async function createPromptTranscriber(
  options: PromptTranscriberOptions,
  environment: NodeJS.ProcessEnv = process.env,
): Promise<PromptTranscriber> {
  const filled =
    options.transcripts === undefined
      ? new Map<string, { text: string; line: number }>()
      : await readPromptTranscripts(options.transcripts);
  const used = new Set<string>();
  let asr: OpenAITranscriber | undefined;
  if (options.asrUrl !== undefined) {
    let apiKey: string | undefined;
    if (options.asrKeyVariable !== undefined) {
      apiKey = environment[options.asrKeyVariable];
      if (apiKey === undefined || apiKey.trim() === '')
        throw new BuildInputError(`--asr-key-variable ${options.asrKeyVariable}: the environment variable is not set`);
    }
    asr = new OpenAITranscriber({
      baseUrl: options.asrUrl.replace(/\/+$/, ''),
      ...(options.asrModel === undefined ? {} : { model: options.asrModel }),
      ...(apiKey === undefined ? {} : { apiKey }),
      ...(options.asrTimeout === undefined ? {} : { timeoutMilliseconds: options.asrTimeout * 1000 }),
    });
  }
  const fileName = options.transcripts === undefined ? undefined : path.basename(options.transcripts);
  const parts = [
    ...(fileName === undefined ? [] : [fileName]),
    ...(asr === undefined ? [] : [`asr ${asr.description}`]),
  ];
  return {
    description: parts.length === 0 ? null : parts.join(' + '),
    unusedRows: () =>
      [...filled.entries()]
        .filter(([id]) => !used.has(id))
        .map(
          ([id, { line }]) =>
            `${options.transcripts}:${line}: clip ${id} was not cut in this run (other input or options than when the file was written); its text is unused`,
        ),
    transcribe: async (clip, wav) => {
      const row = filled.get(clip.id);
      if (row !== undefined) {
        used.add(clip.id);
        return { text: row.text, transcribedBy: `filled-in ${fileName}` };
      }
      if (asr === undefined)
        return {
          missing:
            fileName === undefined
              ? 'no text yet (fill in the transcripts TSV or give --asr-url)'
              : `no text in ${fileName}`,
        };
      try {
        const text = normalizeTranscript(
          await asr.transcribe({
            wav,
            fileName: `${clip.id}.wav`,
            ...(options.asrLanguage === undefined ? {} : { language: options.asrLanguage }),
          }),
        );
        if (text === '') return { missing: 'the ASR service heard no words' };
        return { text, transcribedBy: `asr ${asr.description}` };
      } catch (error) {
        if (error instanceof TranscriptionError && !error.isServiceUnusable)
          return { missing: `the ASR service failed: ${error.message}` };
        throw error;
      }
    },
  };
}
