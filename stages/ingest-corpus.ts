/**
 * Stage `ingest-corpus`: reads the configured corpus (TopiOCQA raw release) into SourceConversations.
 * Structural file errors (unreadable, invalid UTF-8, empty, not JSON, not a list) stop the build with
 * a message naming the file; an invalid conversation (a missing field, control characters under
 * `corpus.controlCharacters: reject`, an utterance over `corpus.maximumUtteranceCharacters`) is
 * skipped and reported, so it never sinks the run. This runs before any service is called.
 */
import { loadTopiocqa } from '../corpora/topiocqa.ts';
import type { BuildConfig } from '../pipeline/config.ts';
import type { Language, SourceConversation } from '../pipeline/model/types.ts';
import { languagePackOf, lettersOutsideScript } from '../pipeline/model/language-pack.ts';
import { BuildInputError } from '../pipeline/model/build-errors.ts';
import type { Stage } from '../pipeline/run/stage.ts';

/** Result of ingestion: the conversations to build and those rejected, with reasons. */
export interface IngestedCorpus {
  conversations: SourceConversation[];
  rejected: { id: string; reason: string }[];
  /** The loader's summary of the corpus quirks it handled (counts per kind and what was done). */
  warnings: string[];
  /**
   * Quirks that change what is spoken, one line per turn, naming the dialogue id: a turn with an
   * empty answer before the conversation's last turn (the answer is not spoken, so the user asks the
   * next question after their own question: a TURN_HOLD, not an answer). The build prints them and
   * keeps them in the dataset summary. (An empty answer on the last turn is the corpus's usual open
   * final question and is only counted in `warnings`.) Also: control characters removed from a
   * field, and letters of another script than the build language's, or emoji ({@link scriptMismatchNotes}).
   */
  notes: string[];
}

/**
 * Ingest the corpus named by `config.corpus`.
 * @throws TopiocqaFormatError (corpora/topiocqa.ts) for whole-file problems, naming the file
 */
export async function ingestCorpus(config: Pick<BuildConfig, 'corpus' | 'languages'>): Promise<IngestedCorpus> {
  const result = await loadTopiocqa(config.corpus.path, {
    unanswerable: config.corpus.unanswerable,
    onInvalid: 'skip',
    ...(config.corpus.limit ? { limit: config.corpus.limit } : {}),
    controlCharacters: config.corpus.controlCharacters ?? 'remove',
    maximumUtteranceCharacters: config.corpus.maximumUtteranceCharacters ?? 2000,
    ...(config.corpus.maximumTurnsPerConversation !== undefined
      ? { maximumTurnsPerConversation: config.corpus.maximumTurnsPerConversation }
      : {}),
    ...(config.corpus.maximumFileBytes !== undefined ? { maximumFileBytes: config.corpus.maximumFileBytes } : {}),
  });
  const idOf = new Map(result.conversations.map((conversation) => [conversation.conversationNumber, conversation.id]));
  const notes = result.quirks.flatMap((quirk) => {
    if (!idOf.has(quirk.conversationNumber)) return [];
    const where = `${idOf.get(quirk.conversationNumber)} turn ${quirk.turnNumber ?? '?'}: field "${quirk.field ?? '?'}"`;
    if (quirk.kind === 'empty-answer' && quirk.detail !== 'final turn') {
      return [
        `${where} is empty in ${config.corpus.path}; the answer is not spoken and the next question follows the question (TURN_HOLD)`,
      ];
    }
    if (quirk.kind === 'control-characters-removed') return [`${where}: control characters removed (${quirk.detail})`];
    return [];
  });
  const corpusLanguage = config.corpus.language ?? 'en';
  checkCorpusScript(result.conversations, corpusLanguage, config.corpus.path);
  if (corpusLanguage === 'en') notes.push(...scriptMismatchNotes(result.conversations, config.languages));
  return {
    // a corpus in another language than English says so on each conversation (prepare-text: what to translate)
    conversations:
      corpusLanguage === 'en'
        ? result.conversations
        : result.conversations.map((conversation) => ({ ...conversation, language: corpusLanguage })),
    rejected: result.rejected.map((item) => ({ id: `conversation ${item.conversationNumber}`, reason: item.reason })),
    warnings: result.warnings,
    notes,
  };
}

/** Share of a corpus's letters outside its language's script above which it is refused. */
export const MAXIMUM_LETTERS_OUTSIDE_SCRIPT = 0.5;

/**
 * Refuses a corpus whose text is not in its declared language (`corpus.language`): more than half of
 * its letters outside the language pack's scripts (a Chinese pack on an English corpus).
 * @throws BuildInputError naming the file, the field `corpus.language` and the share
 */
export function checkCorpusScript(
  conversations: readonly SourceConversation[],
  language: Language,
  file: string,
): void {
  const pack = languagePackOf(language);
  const text = conversations
    .flatMap((conversation) => conversation.turns.flatMap((turn) => [turn.question, turn.answer ?? '']))
    .join(' ');
  const outside = lettersOutsideScript(text, pack);
  if (outside > MAXIMUM_LETTERS_OUTSIDE_SCRIPT) {
    throw new BuildInputError(
      `${file}: corpus.language: ${language}, but ${(outside * 100).toFixed(0)} % of the corpus's letters are outside ${pack.name}'s script (${pack.script.scripts.join(', ')}); set corpus.language to the language it is written in`,
    );
  }
}

/** Letters of the source text's expected script (TopiOCQA is English: Latin), digits and punctuation. */
const EXPECTED_SOURCE_CHARACTERS = /[\p{Script=Latin}\p{Script=Common}\p{Script=Inherited}]/u;
/** Emoji shown as pictures by default, and the pictograph blocks (U+1F000–U+1FAFF); not ©, ® or ™. */
const EMOJI = /\p{Emoji_Presentation}|[\u{1F000}-\u{1FAFF}]/u;
const RIGHT_TO_LEFT_SCRIPTS = new Set(['Arabic', 'Hebrew', 'Syriac', 'Thaana', 'Nko', 'Samaritan', 'Mandaic', 'Adlam']);
/** Scripts named in the notes (others are reported as "other"); enough for what real corpora carry. */
const NAMED_SCRIPTS = [
  'Greek',
  'Cyrillic',
  'Arabic',
  'Hebrew',
  'Han',
  'Hiragana',
  'Katakana',
  'Hangul',
  'Devanagari',
  'Thai',
  'Armenian',
  'Georgian',
  'Syriac',
  'Thaana',
];
const SCRIPT_PATTERNS = NAMED_SCRIPTS.map((name) => [name, new RegExp(`\\p{Script=${name}}`, 'u')] as const);

/**
 * One note per turn and field whose source text an English build would speak as is although it holds
 * letters of another script than Latin (Greek, Cyrillic, right-to-left Arabic or Hebrew, …) or emoji:
 * `{id} turn {n}: field "Answer" has 3 characters of another script than English's Latin (Greek) …`.
 * The text is kept (real TopiOCQA answers quote Greek etymologies); the note tells that the speech
 * engine may spell or skip those characters. Builds without English (the text is translated first, and
 * the translation is checked for its own script) get no notes.
 * @param conversations the ingested conversations
 * @param languages the build languages
 */
export function scriptMismatchNotes(
  conversations: readonly SourceConversation[],
  languages: readonly Language[],
): string[] {
  if (!languages.includes('en')) return [];
  const notes: string[] = [];
  for (const conversation of conversations) {
    for (const turn of conversation.turns) {
      for (const [field, text] of [
        ['Question', turn.question],
        ['Answer', turn.answer],
      ] as const) {
        if (text === null) continue;
        const characters = [...text];
        const emoji = characters.filter((character) => EMOJI.test(character));
        const foreign = characters.filter(
          (character) =>
            !EXPECTED_SOURCE_CHARACTERS.test(character) &&
            !EMOJI.test(character) &&
            /\p{L}|\p{M}|\p{N}/u.test(character),
        );
        if (foreign.length === 0 && emoji.length === 0) continue;
        const scripts = [
          ...new Set(
            foreign.map((character) => SCRIPT_PATTERNS.find(([, pattern]) => pattern.test(character))?.[0] ?? 'other'),
          ),
        ];
        const parts: string[] = [];
        if (foreign.length > 0) {
          const direction = scripts.some((script) => RIGHT_TO_LEFT_SCRIPTS.has(script))
            ? ', written right to left'
            : '';
          parts.push(
            `${foreign.length} characters of another script than English's Latin (${scripts.join(', ')}${direction})`,
          );
        }
        if (emoji.length > 0) parts.push(`${emoji.length} emoji (${[...new Set(emoji)].slice(0, 5).join(' ')})`);
        notes.push(
          `${conversation.id} turn ${turn.turnNumber}: field "${field}" has ${parts.join(' and ')}; kept, the English speech engine may spell or skip them`,
        );
      }
    }
  }
  return notes;
}

/**
 * Stage `ingest-corpus`: {@link ingestCorpus}. The input is the corpus setting (its file and how to
 * read it), the parameter the build's languages (for the script checks). Not cached (a local file).
 * @throws as {@link ingestCorpus}
 */
export const ingestCorpusStage: Stage<Pick<BuildConfig, 'corpus'>, Pick<BuildConfig, 'languages'>, IngestedCorpus> = {
  name: 'ingest-corpus',
  inputs: ['corpus'],
  parameters: ['languages'],
  cacheStages: [],
  cacheKeys: async () => [],
  run: (input, parameters) => ingestCorpus({ corpus: input.corpus, languages: parameters.languages }),
};
