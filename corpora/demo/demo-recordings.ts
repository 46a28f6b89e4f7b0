/**
 * The demo corpus's recorded LLM responses: HAND-WRITTEN texts (demo-responses.source.yaml), not model
 * output, stored as a recorded-response file (recorded-responses.jsonl) under the keys of the exact
 * requests the pipeline builds, so `llm.rewrite` / `llm.translate` with `backend: replay` run the demo
 * offline through the real prompt → parse → validate path.
 *
 * {@link recordDemoResponses} regenerates the file (scripts/record-demo-responses.ts calls it): it loads
 * the demo corpus with the TopiOCQA loader, runs the real `LanguageModelTextBackend` over a
 * `RecordingModel` whose inner model answers with the hand-written texts, and so records exactly the
 * requests a replay will make. The hand-written texts pass the same validation as model output.
 */
import { readFile, rm, rename } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import type { SourceConversation } from '../../pipeline/model/types.ts';
import type { GenerationSettings } from '../../pipeline/services/llm/dialogue-text.ts';
import { LanguageModelTextBackend } from '../../pipeline/services/llm/dialogue-text-backend.ts';
import { FakeLanguageModel } from '../../pipeline/services/llm/fake-language-model.ts';
import type { GenerationRequest } from '../../pipeline/services/llm/language-model.ts';
import { RecordingModel } from '../../pipeline/services/llm/replay-model.ts';
import { loadTopiocqa } from '../topiocqa.ts';
import { describeIssues } from '../../pipeline/model/validation.ts';
import { languageCodeSchema } from '../../pipeline/model/language-code.ts';
import { packageFile } from '../../pipeline/storage/package-files.ts';

/** The demo corpus, raw TopiOCQA format. */
export const DEMO_CORPUS_FILE = packageFile('corpora', 'demo', 'demo_topiocqa.json');
/** Hand-written spoken English and Japanese per demo conversation. */
export const DEMO_RESPONSE_SOURCE_FILE = packageFile('corpora', 'demo', 'demo-responses.source.yaml');
/** Hand-written translations of the demo conversations into more languages (zh, de). */
export const DEMO_TRANSLATION_SOURCE_FILE = packageFile('corpora', 'demo', 'demo-translations.source.yaml');
/** The recorded-response file the demo config replays. */
export const DEMO_RECORDED_RESPONSES_FILE = packageFile('corpora', 'demo', 'recorded-responses.jsonl');

/**
 * Generation settings of the demo recordings; the replay backend must use the same (these are the
 * defaults of `createDialogueTextBackend` apart from the model name). The model name says what the
 * responses are: hand-written, not from a model.
 */
export const DEMO_GENERATION_SETTINGS: GenerationSettings = {
  model: 'hand-written-demo',
  temperature: 0,
  seed: 1234,
  structuredOutput: false,
};

const handWrittenTurnSchema = z.object({ question: z.string().min(1), answer: z.string().min(1).nullable() });
const responseSourceSchema = z.object({
  conversations: z.array(
    z.object({
      conversation: z.number().int().positive(),
      spoken: z.array(handWrittenTurnSchema).min(1),
      japanese: z.array(handWrittenTurnSchema).min(1),
    }),
  ),
});

const translationSourceSchema = z.object({
  conversations: z.array(
    z.object({
      conversation: z.number().int().positive(),
      translations: z.record(languageCodeSchema, z.array(handWrittenTurnSchema).min(1)),
    }),
  ),
});

/**
 * Reads the hand-written translations into more languages.
 * @returns per conversation number, the turns per language code
 * @throws Error when the file cannot be read, is not YAML, fails the schema, or repeats a conversation.
 */
export async function readHandWrittenTranslations(file: string = DEMO_TRANSLATION_SOURCE_FILE): Promise<Map<number, Record<string, HandWrittenConversation['spoken']>>> {
  const parsed = translationSourceSchema.safeParse(parseYaml(await readFile(file, 'utf8')));
  if (!parsed.success) throw new Error(`${file}: ${describeIssues(parsed.error.issues)}`);
  const byNumber = new Map<number, Record<string, HandWrittenConversation['spoken']>>();
  for (const conversation of parsed.data.conversations) {
    if (byNumber.has(conversation.conversation)) throw new Error(`${file}: conversation ${conversation.conversation} appears twice`);
    byNumber.set(conversation.conversation, conversation.translations);
  }
  return byNumber;
}

/** The hand-written texts of one conversation. */
export type HandWrittenConversation = z.infer<typeof responseSourceSchema>['conversations'][number];

/**
 * Reads the hand-written response source.
 *
 * @param file the YAML file (default {@link DEMO_RESPONSE_SOURCE_FILE}).
 * @returns the texts by conversation number.
 * @throws Error when the file cannot be read, is not YAML, fails the schema, or repeats a conversation.
 */
export async function readHandWrittenResponses(file: string = DEMO_RESPONSE_SOURCE_FILE): Promise<Map<number, HandWrittenConversation>> {
  const parsed = responseSourceSchema.safeParse(parseYaml(await readFile(file, 'utf8')));
  if (!parsed.success) {
    throw new Error(`${file}: ${describeIssues(parsed.error.issues)}`);
  }
  const byNumber = new Map<number, HandWrittenConversation>();
  for (const conversation of parsed.data.conversations) {
    if (byNumber.has(conversation.conversation)) throw new Error(`${file}: conversation ${conversation.conversation} appears twice`);
    byNumber.set(conversation.conversation, conversation);
  }
  return byNumber;
}

/**
 * Loads the demo conversations with the project's TopiOCQA loader (default options, as the demo
 * config: unanswerable turns kept with `answerable: false`).
 *
 * @param file the demo corpus (default {@link DEMO_CORPUS_FILE}), or any TopiOCQA-format file.
 * @param limit only the first `limit` conversations (as `corpus.limit` in a build config).
 * @returns the conversations.
 * @throws TopiocqaFormatError when the corpus is malformed.
 */
export async function loadDemoConversations(file: string = DEMO_CORPUS_FILE, limit?: number): Promise<SourceConversation[]> {
  return (await loadTopiocqa(file, limit !== undefined ? { limit } : {})).conversations;
}

/** Where {@link recordDemoResponses} reads and writes. */
export interface RecordDemoResponsesOptions {
  corpusFile?: string;
  sourceFile?: string;
  outputFile?: string;
  settings?: GenerationSettings;
  /** Only the first `limit` conversations of the corpus (default all). */
  limit?: number;
  /** Hand-written translations into more languages (default {@link DEMO_TRANSLATION_SOURCE_FILE} with the demo corpus, none otherwise). */
  translationFile?: string | null;
}

/**
 * Rebuilds the recorded-response file from the hand-written texts: for each demo conversation the
 * rewrite request and, built from the parsed rewrite, the Japanese translation request. Writes to a
 * temporary file and renames it over `outputFile` at the end.
 *
 * @param options files and settings (defaults: the demo files and {@link DEMO_GENERATION_SETTINGS}).
 * @returns the number of conversations and of records written.
 * @throws Error when a conversation has no hand-written texts; DialogueTextError when a hand-written
 *   text fails validation (wrong turn count, digits, Latin letters in Japanese, …).
 */
export async function recordDemoResponses(options: RecordDemoResponsesOptions = {}): Promise<{ conversations: number; records: number }> {
  const outputFile = options.outputFile ?? DEMO_RECORDED_RESPONSES_FILE;
  const conversations = await loadDemoConversations(options.corpusFile, options.limit);
  const handWritten = await readHandWrittenResponses(options.sourceFile);
  const byDialogueId = new Map(conversations.map((conversation) => [conversation.id, conversation.conversationNumber]));
  const translationFile = options.translationFile !== undefined ? options.translationFile : options.corpusFile === undefined ? DEMO_TRANSLATION_SOURCE_FILE : null;
  const translations = translationFile === null ? new Map<number, Record<string, HandWrittenConversation['spoken']>>() : await readHandWrittenTranslations(translationFile);
  /** Target language of the translation being recorded. */
  let target = 'ja';

  const answerFor = (request: GenerationRequest): string => {
    const conversationNumber = byDialogueId.get(request.trace?.dialogueId ?? '');
    const texts = conversationNumber === undefined ? undefined : handWritten.get(conversationNumber);
    if (texts === undefined) throw new Error(`no hand-written responses for dialogue ${request.trace?.dialogueId ?? '?'}`);
    const other = conversationNumber === undefined ? undefined : translations.get(conversationNumber)?.[target];
    if (request.trace?.task === 'translate' && target !== 'ja' && other === undefined) throw new Error(`no hand-written ${target} translation for dialogue ${request.trace.dialogueId ?? '?'}`);
    const turns = request.trace?.task !== 'translate' ? texts.spoken : target === 'ja' ? texts.japanese : other;
    return JSON.stringify({ turns });
  };

  let records = conversations.length * 2;
  const temporaryFile = `${outputFile}.${process.pid}.recording`;
  await rm(temporaryFile, { force: true });
  const model = new RecordingModel(new FakeLanguageModel({ id: 'hand-written', respond: answerFor }), temporaryFile);
  const backend = new LanguageModelTextBackend(model, { settings: options.settings ?? DEMO_GENERATION_SETTINGS });
  try {
    for (const conversation of conversations) {
      const spoken = await backend.rewrite({ dialogueId: conversation.id, language: 'en', turns: conversation.turns });
      target = 'ja';
      await backend.translate({ dialogueId: conversation.id, sourceLanguage: 'en', targetLanguage: 'ja', turns: spoken });
      for (const language of Object.keys(translations.get(conversation.conversationNumber) ?? {}).sort()) {
        target = language;
        await backend.translate({ dialogueId: conversation.id, sourceLanguage: 'en', targetLanguage: language, turns: spoken });
        records += 1;
      }
    }
    await rename(temporaryFile, outputFile);
  } catch (error) {
    await rm(temporaryFile, { force: true });
    throw error;
  }
  return { conversations: conversations.length, records };
}
