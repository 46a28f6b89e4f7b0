/**
 * The check, made once right after the corpus is read and before any dialogue is rewritten or
 * synthesised, that the offline rewrite can speak the corpus's numbers. The `rules` rewrite of a
 * language other than English keeps the written text and spells its numbers with the language pack's
 * number library (pipeline/services/llm/rules-backend.ts); a pack with `numbers: language-model` has
 * none, so a corpus with digits would fail dialogue by dialogue. One line says so up front instead.
 */
import { ConfigError, type BuildConfig } from '../pipeline/config.ts';
import { languagePackOf, languagePackSource } from '../pipeline/model/language-pack.ts';
import type { SourceConversation } from '../pipeline/model/types.ts';

/** Arabic digits as the speakable-text check finds them (pipeline/text/text-checks.ts), after NFKC. */
const DIGITS = /[0-9](?:[0-9,.]*[0-9])?/;

/**
 * Throws when the build rewrites with the offline `rules` backend, the corpus language's pack leaves
 * numbers to a language model (`numbers: language-model`) and a question or answer of the corpus holds
 * Arabic digits (full-width digits count, as NFKC makes them ASCII). English is spoken by the English
 * rules, and an LLM rewrite writes the numbers itself: neither is checked.
 * @param config the build's corpus language and rewrite backend
 * @param conversations the ingested corpus (after `corpus.limit`)
 * @throws ConfigError, one line naming the pack file, its `numbers` field, the first dialogue and turn
 *   with digits, and that an LLM rewrite backend (`llm.rewrite`) is needed
 */
export function checkCorpusNumbersCanBeSpoken(
  config: Pick<BuildConfig, 'corpus' | 'llm'>,
  conversations: readonly SourceConversation[],
): void {
  const language = config.corpus.language ?? 'en';
  if (config.llm.rewrite.backend !== 'rules' || language === 'en') return;
  const pack = languagePackOf(language);
  if (typeof pack.numbers !== 'string') return;
  for (const conversation of conversations) {
    for (const turn of conversation.turns) {
      for (const [field, text] of [
        ['question', turn.question],
        ['answer', turn.answer],
      ] as const) {
        const digits = text?.normalize('NFKC').match(DIGITS);
        if (digits === null || digits === undefined) continue;
        throw new ConfigError(
          `${languagePackSource(pack)}: numbers: ${pack.numbers}: no number library writes ${pack.name} numbers, and the corpus has digits ` +
            `(${conversation.id} turn ${turn.turnNumber} ${field}: "${digits[0]}"); the offline rules rewrite keeps them, ` +
            'so an LLM rewrite backend is needed (llm.rewrite: gemini, openai-compatible or replay), or write the numbers as words in the corpus',
        );
      }
    }
  }
}
