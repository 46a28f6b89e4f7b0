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
  warnings: string[];
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
  return {
    conversations: result.conversations,
    rejected: result.rejected.map((item) => ({ id: `conversation ${item.conversationNumber}`, reason: item.reason })),
    warnings: result.warnings,
  };
}
