/**
 * Stage `ingest-corpus`: reads the configured corpus (TopiOCQA raw release) into SourceConversations.
 * Structural file errors (unreadable, empty, not JSON, not a list) stop the build with a message
 * naming the file; an invalid conversation is skipped and reported, so it never sinks the run.
 */
import { loadTopiocqa } from '../corpora/topiocqa.ts';
import type { BuildConfig } from '../pipeline/config.ts';
import type { SourceConversation } from '../pipeline/model/types.ts';

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
   * final question and is only counted in `warnings`.)
   */
  notes: string[];
}

/**
 * Ingest the corpus named by `config.corpus`.
 * @throws TopiocqaFormatError (corpora/topiocqa.ts) for whole-file problems, naming the file
 */
export async function ingestCorpus(config: BuildConfig): Promise<IngestedCorpus> {
  const result = await loadTopiocqa(config.corpus.path, {
    unanswerable: config.corpus.unanswerable,
    onInvalid: 'skip',
    ...(config.corpus.limit ? { limit: config.corpus.limit } : {}),
  });
  const idOf = new Map(result.conversations.map((conversation) => [conversation.conversationNumber, conversation.id]));
  const notes = result.quirks.flatMap((quirk) =>
    quirk.kind === 'empty-answer' && quirk.detail !== 'final turn' && idOf.has(quirk.conversationNumber)
      ? [
          `${idOf.get(quirk.conversationNumber)} turn ${quirk.turnNumber ?? '?'}: field "Answer" is empty in ${config.corpus.path}; ` +
            'the answer is not spoken and the next question follows the question (TURN_HOLD)',
        ]
      : [],
  );
  return {
    conversations: result.conversations,
    rejected: result.rejected.map((item) => ({ id: `conversation ${item.conversationNumber}`, reason: item.reason })),
    warnings: result.warnings,
    notes,
  };
}
