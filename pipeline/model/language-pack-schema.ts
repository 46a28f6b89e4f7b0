/**
 * The schema of a language pack file (`pipeline/model/language-packs/*.yaml` or a user's own, see
 * ./language-pack.ts): every field with its default and its meaning, and the checks across fields.
 * `docs/language-packs.md` is generated from it.
 */
import { z } from 'zod';
import { languageCodeSchema } from './language-code.ts';
import { cardinalSpeller, NUMBER_LIBRARIES, ordinalSpeller } from './number-library.ts';

/** A Unicode script name as `\p{Script=…}` takes it (`Latin`, `Han`, `Hangul`, `Hiragana`, …). */
const unicodeScript = z.string().refine((name) => {
  try {
    new RegExp(`\\p{Script=${name}}`, 'u');
    return true;
  } catch {
    return false;
  }
}, 'not a Unicode script name (Latin, Han, Hangul, Hiragana, Katakana, Cyrillic, Arabic, Thai, …)');

const phraseList = z.array(z.string().min(1)).nonempty();
/** A padding template: `{text}` is replaced by the utterance. */
const paddingTemplate = z.string().includes('{text}', { message: 'must contain {text}' });

/**
 * `numbers` by a number library (pipeline/model/number-library.ts): the offline rewrite of a corpus in
 * the language spells every number with it (pipeline/text/spoken-numbers.ts). `locale` is the library's
 * module name and is checked when the pack is read.
 */
const numberLibrarySchema = z
  .object({
    library: z.enum(NUMBER_LIBRARIES).describe('The library: n2words (71 languages) or to-words.'),
    locale: z
      .string()
      .min(2)
      .describe("The library's locale module: es-ES, de-DE, nl-NL, hi-IN, th-TH, zh-Hans-CN (n2words src/ names)."),
    years: z
      .union([
        z.enum(['cardinal', 'digits']),
        z.string().includes('{century}', { message: 'a years template must contain {century}' }),
      ])
      .default('cardinal')
      .describe(
        'How a four-digit year (1000-2099) is read: cardinal (a number: mil ochocientos ochenta y siete), digits (digit by digit: 一八八七) or a template for 1100-1999 read in hundreds, {century} and {rest} replaced by words ("{century}hundert{rest}").',
      ),
    units: z
      .record(
        z.string().min(1),
        z.string().min(1).describe('The spoken word after the number, or a template with {number} (百分之{number}).'),
      )
      .default({})
      .describe('Unit symbols written after a number and their spoken words ({"%": por ciento, km: kilómetros}).'),
    decimalWord: z
      .string()
      .min(1)
      .optional()
      .describe(
        "The word read for the decimal separator (3,5: tres coma cinco), in place of the library's own (n2words reads punto in every Spanish locale); default the library's.",
      ),
    dates: z
      .object({
        months: z
          .array(z.string().min(1))
          .length(12)
          .describe(
            'The twelve month names, January first: a day 1-31 written with a period before one (3. Oktober) is read as an ordinal.',
          ),
        endings: z
          .record(z.string().min(1), z.string().describe('The ending added to the ordinal after this word (n).'))
          .default({})
          .describe(
            "The words before a date whose case changes the ordinal, and the ending added after them ({am: n}: am dritten Oktober); after any other word the library's ordinal (der dritte Oktober).",
          ),
      })
      .strict()
      .optional()
      .describe(
        "Dates with ordinal days (German 3. Oktober), read by the library's ordinals (n2words); default none: the day is read as a number.",
      ),
  })
  .strict()
  .superRefine((numbers, context) => {
    if (cardinalSpeller(numbers.library, numbers.locale) === null)
      context.addIssue({
        code: 'custom',
        path: ['locale'],
        message: `${numbers.library} has no locale "${numbers.locale}"`,
      });
    else if (numbers.dates !== undefined && ordinalSpeller(numbers.library, numbers.locale) === null)
      context.addIssue({
        code: 'custom',
        path: ['dates'],
        message: `${numbers.library} has no ordinals for "${numbers.locale}" (n2words has them)`,
      });
  });

/** zod schema of a language pack file. */
export const languagePackSchema = z
  .object({
    code: languageCodeSchema.describe("The language's BCP-47 code (zh, de, pt-BR)."),
    name: z.string().min(1).describe('English name, for messages and dataset cards.'),
    script: z
      .object({
        scripts: z
          .array(unicodeScript)
          .nonempty()
          .describe("Unicode scripts of the language's letters (Latin, Han, Hangul, Hiragana, …)."),
        segmentation: z
          .enum(['spaces', 'intl-segmenter', 'japanese-morphemes'])
          .describe(
            'How text becomes the words of txt_align: spaces, intl-segmenter (ICU word boundaries) or japanese-morphemes (kuromoji).',
          ),
        /**
         * How the reply check (pipeline/text/text-checks.ts) names the language's letters when a line
         * has none: "contains no {missingLetters}". Default: "{scripts} letters ({name})".
         */
        missingLetters: z
          .string()
          .min(1)
          .optional()
          .describe(
            'How the reply check names the language\'s letters when a line has none; default "{scripts} letters ({name})".',
          ),
        /**
         * For a language written without Latin letters: what to do with an untranslated Latin word,
         * appended to the reply check's message ("write it in katakana"). Default: nothing appended.
         */
        latinAdvice: z
          .string()
          .min(1)
          .optional()
          .describe(
            'Language without Latin letters: what to do with an untranslated Latin word, appended to the reply check message; default none.',
          ),
        /**
         * For a language written in Latin letters: how the reply check names Chinese or Japanese
         * characters in a line ("contains {foreignLetters}"). Default: "Japanese or Chinese characters".
         */
        foreignLetters: z
          .string()
          .min(1)
          .optional()
          .describe(
            'Language in Latin letters: how the reply check names Chinese or Japanese characters in a line; default "Japanese or Chinese characters".',
          ),
      })
      .strict()
      .describe('The letters of the language and how its text is cut into words.'),
    numbers: z
      .union([z.enum(['english-rules', 'language-model']), numberLibrarySchema])
      .describe(
        'How numbers, dates and units become words offline: english-rules (the English rules), {library, locale, years, units} (a number library spells them in the language), or language-model (no library covers the language: only an LLM rewrite or translation writes them). LLM replies are checked to hold no digits.',
      ),
    offlineVoice: z
      .object({
        engine: z.enum(['espeak-ng', 'open-jtalk']).describe('Offline engine: espeak-ng, or open-jtalk (Japanese).'),
        voice: z
          .string()
          .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'a voice name like de, cmn or en-us')
          .describe('espeak-ng voice name (espeak-ng --voices: cmn, de, es), or nitech-m001 for open-jtalk.'),
        variants: z
          .array(z.string().regex(/^[A-Za-z0-9]+$/))
          .min(1)
          .default(['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'f1', 'f2', 'f3', 'f4', 'f5'])
          .describe(
            'espeak-ng variants forming the speaker roster with two pitches each (an even count gives speaker pairs).',
          ),
      })
      .strict()
      .describe('The offline speech engine and its speaker roster.'),
    cosyVoice: z
      .object({
        cosyvoice2: z.boolean().describe('CosyVoice2 (zh, en, ja, ko, yue) speaks the language.'),
        cosyvoice3: z.boolean().describe('CosyVoice3 (zh, en, ja, ko, de, es, fr, it, ru) speaks the language.'),
        /**
         * A language tag put before the text sent to CosyVoice (`tts_text`), or null for none. CosyVoice 1
         * (CosyVoice-300M) marks cross-lingual text with whisper-tokenizer tokens such as `<|zh|>`,
         * `<|en|>`, `<|jp|>`, `<|yue|>`, `<|ko|>` (FunAudioLLM/CosyVoice example.py, cosyvoice/tokenizer/
         * tokenizer.py); CosyVoice2 and 3 take none (their Qwen tokenizer has no language tokens, so a tag
         * is read as text and gives leading garbage: docs/services.md), hence null in every
         * built-in pack.
         */
        tag: z
          .string()
          .min(1)
          .nullable()
          .default(null)
          .describe(
            'Language tag put before the text sent to CosyVoice, or null; CosyVoice2 and 3 take none (a tag is read as text).',
          ),
        note: z
          .string()
          .default('')
          .describe('What the text sent to CosyVoice needs (a language tag, kana readings, …).'),
      })
      .strict()
      .describe(
        'Which CosyVoice generation speaks the language (pipeline/services/tts/cosyvoice-languages.ts); a build with a model that does not stops before any request.',
      ),
    phrases: z
      .object({
        backchannels: phraseList.describe(
          "The user's backchannels inside the system's answers (those longer than 0.8 s are not used).",
        ),
        padding: z
          .object({
            question: z
              .tuple([paddingTemplate, paddingTemplate])
              .describe('Two lead-ins for a too-short question, {text} replaced by it.'),
            answer: z
              .tuple([paddingTemplate, paddingTemplate])
              .describe('Two lead-ins for a too-short answer, {text} replaced by it.'),
          })
          .strict()
          .describe('Lead-ins for a question or answer spoken too short (an IPU <= 0.8 s is a BC), two steps each.'),
      })
      .strict()
      .describe("The user's backchannels and the lead-ins that pad too-short utterances."),
    /**
     * Speaking-rate bounds of synthesized speech, in the word tokenizer's units per second (letters as
     * grapheme clusters, pipeline/model/grapheme-clusters.ts, or morae for japanese-morphemes
     * segmentation), and how quality scoring counts the rate.
     */
    speechRate: z
      .object({
        /**
         * The unit of the speech rate that quality.json, the tables and the report give (counted by
         * `qualityCounter`; `typical`, `minimum`, `maximum` are in the word tokenizer's units instead:
         * letters, or morae for japanese-morphemes): `syllable` (default) or `mora`.
         */
        qualityUnit: z
          .enum(['syllable', 'mora'])
          .default('syllable')
          .describe('Unit of the speech rate in quality.json, the tables and the report: syllable or mora.'),
        /**
         * How the quality speech rate's units are counted (pipeline/quality/speech-rate.ts): `english-syllables`
         * (CMU dictionary, rules where unknown), `japanese-morae` (kuromoji IPADIC pronunciations), or
         * `script-syllables` (default: one per Chinese character, Hangul block or kana, one per vowel group
         * in Latin, Greek and Cyrillic words, one per grapheme cluster of a letter of any other script).
         */
        qualityCounter: z
          .enum(['english-syllables', 'japanese-morae', 'script-syllables'])
          .default('script-syllables')
          .describe(
            'How the quality speech rate is counted: english-syllables (CMU dictionary), japanese-morae (kuromoji) or script-syllables.',
          ),
        /**
         * Speech the offline engine spoke implausibly slowly (below `below` units per second, estimated
         * from the text) is synthesized again with phrase breaks: `japanese-phrase-breaks` puts 、 after
         * each phrase-final particle (kuromoji), since Open JTalk stretches one long accent phrase (a run of
         * kanji numerals) to about 2.5 morae/s (stages/synthesize-speech.ts). Default: none.
         */
        slowSpeechRepair: z
          .object({
            method: z
              .literal('japanese-phrase-breaks')
              .describe('japanese-phrase-breaks: put 、 after each phrase-final particle (kuromoji).'),
            below: z
              .number()
              .positive()
              .describe(
                'Speech slower than this, spoken units per second estimated from the text, is synthesized again.',
              ),
          })
          .strict()
          .nullable()
          .default(null)
          .describe(
            'Speech the offline engine spoke implausibly slowly is synthesized again with phrase breaks (Open JTalk stretches long kanji numerals); null = none.',
          ),
        typical: z
          .number()
          .positive()
          .describe(
            "Typical speaking rate, the word tokenizer's units per second (letters counted as grapheme clusters, a letter with its vowel signs and marks being one; morae for japanese-morphemes).",
          ),
        minimum: z
          .number()
          .positive()
          .describe("Slowest plausible speaking rate, the word tokenizer's units per second."),
        maximum: z
          .number()
          .positive()
          .describe("Fastest plausible speaking rate, the word tokenizer's units per second."),
        source: z.string().min(1).describe('Where the speaking-rate numbers come from (a publication or measurement).'),
      })
      .strict()
      .refine((rate) => rate.minimum < rate.typical && rate.typical < rate.maximum, 'needs minimum < typical < maximum')
      .describe('Speaking-rate bounds of synthesized speech, and how quality scoring counts the rate.'),
    timing: z
      .object({
        statistics: z
          .string()
          .regex(/^[A-Za-z0-9._-]+$/)
          .nullable()
          .describe(
            'Name of the shipped timing statistics (pipeline/timeline/defaults/{name}.timing.json), or null: the cross-language prior, with a warning.',
          ),
      })
      .strict()
      .describe('The timing statistics the timeline draws from.'),
    cometKiwi: z
      .object({
        supported: z
          .boolean()
          .describe('COMETKiwi (XLM-R based) covers the language; else scoring records "not computed".'),
      })
      .strict()
      .describe('Whether COMETKiwi scores translations into the language.'),
    /**
     * Where a question may be split for a user TURN_HOLD (pipeline/text/turn-hold-split.ts): `rules`
     * `words` (at a comma, or before a clause word, conjunction or preposition of the lists below;
     * words are the `txt_align` words, so a language without spaces splits at commas between segmenter
     * words) or `japanese-particles` (after 、 or a phrase-final particle, kuromoji; `minimumMorae` each
     * side). The word lists are compared in lower case; empty lists leave commas only.
     */
    pausePoints: z
      .object({
        rules: z
          .enum(['words', 'japanese-particles'])
          .default('words')
          .describe(
            'Where a question may be split: words (at a comma or before a word of the lists) or japanese-particles (after 、 or a phrase-final particle).',
          ),
        clauseWords: z
          .array(z.string().min(1))
          .default([])
          .describe('Words opening a relative or subordinate clause ("who", "because"), in lower case.'),
        conjunctions: z
          .array(z.string().min(1))
          .default([])
          .describe('Coordinating conjunctions ("and", "but"), in lower case.'),
        prepositions: z
          .array(z.string().min(1))
          .default([])
          .describe('Prepositions that open a phrase ("in", "about"), in lower case.'),
      })
      .strict()
      .prefault({})
      .describe('Where a question may be split for a user TURN_HOLD (pipeline/text/turn-hold-split.ts).'),
  })
  .strict()
  .superRefine((pack, context) => {
    // scripts written without spaces between words cannot be split at spaces
    const unspaced = pack.script.scripts.filter((name) =>
      ['Han', 'Hiragana', 'Katakana', 'Thai', 'Lao', 'Khmer', 'Myanmar'].includes(name),
    );
    if (pack.script.segmentation === 'spaces' && unspaced.length > 0) {
      context.addIssue({
        code: 'custom',
        path: ['script', 'segmentation'],
        message: `"spaces" cannot segment ${unspaced.join(', ')} text (no spaces between words); use intl-segmenter`,
      });
    }
    if (pack.script.segmentation === 'japanese-morphemes' && pack.code !== 'ja') {
      context.addIssue({
        code: 'custom',
        path: ['script', 'segmentation'],
        message: 'japanese-morphemes is for Japanese (ja) only',
      });
    }
    if (pack.pausePoints.rules === 'japanese-particles' && pack.script.segmentation !== 'japanese-morphemes') {
      context.addIssue({
        code: 'custom',
        path: ['pausePoints', 'rules'],
        message: 'japanese-particles needs japanese-morphemes segmentation',
      });
    }
    if (pack.speechRate.qualityCounter === 'japanese-morae' && pack.script.segmentation !== 'japanese-morphemes') {
      context.addIssue({
        code: 'custom',
        path: ['speechRate', 'qualityCounter'],
        message: 'japanese-morae needs japanese-morphemes segmentation',
      });
    }
    if (pack.offlineVoice.engine === 'open-jtalk' && pack.code !== 'ja') {
      context.addIssue({
        code: 'custom',
        path: ['offlineVoice', 'engine'],
        message: 'open-jtalk speaks Japanese only',
      });
    }
    if (pack.numbers === 'english-rules' && pack.code !== 'en' && !pack.code.startsWith('en-')) {
      context.addIssue({
        code: 'custom',
        path: ['numbers'],
        message: 'english-rules write English words; use language-model',
      });
    }
  });

/** A language pack, defaults applied. */
export type LanguagePack = z.output<typeof languagePackSchema>;
