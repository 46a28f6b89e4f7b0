/**
 * Small corpora in three languages that are not built in, Dutch, Hindi and Thai, for the first build
 * with a pack written from docs/language-packs.md (scripts/newcomer-languages.test.ts; the packs are in
 * ./newcomer-packs/). Each is one conversation of three turns about the Eiffel Tower, in the TopiOCQA
 * layout of ./pack-corpora.ts, with years, a decimal and unit symbols as a writer of the language
 * writes them.
 */
import type { PackCorpusTurn } from './pack-corpora.ts';

/** The turns of each newcomer language's corpus, by language code. */
export const NEWCOMER_CORPUS_TURNS: Readonly<Record<string, readonly PackCorpusTurn[]>> = {
  nl: [
    {
      question: 'Wanneer is de Eiffeltoren gebouwd?',
      answer: 'De bouw begon in 1887 en hij ging open op 31 maart 1889.',
    },
    { question: 'Hoe hoog is hij?', answer: 'Hij is 330 m hoog en staat 3,5 km van het Louvre.' },
    { question: 'Komen er veel bezoekers?', answer: 'Ja, ongeveer 7 miljoen per jaar, voor 75 % uit het buitenland.' },
  ],
  hi: [
    { question: 'एफ़िल टावर कब बना था?', answer: 'इसका निर्माण 1887 में शुरू हुआ और यह 31 मार्च 1889 को खुला।' },
    { question: 'यह कितना ऊँचा है?', answer: 'यह 330 m ऊँचा है और लूव्र से 3.5 km दूर है।' },
    { question: 'क्या यहाँ बहुत लोग आते हैं?', answer: 'हाँ, हर साल लगभग 70 लाख लोग आते हैं, जिनमें 75 % विदेशी हैं।' },
  ],
  th: [
    { question: 'หอไอเฟลสร้างเมื่อไหร่', answer: 'เริ่มก่อสร้างในปี 1887 และเปิดเมื่อวันที่ 31 มีนาคม 1889' },
    { question: 'สูงเท่าไหร่', answer: 'สูง 330 m และอยู่ห่างจากพิพิธภัณฑ์ลูฟวร์ 3.5 km' },
    { question: 'มีคนไปเที่ยวเยอะไหม', answer: 'เยอะ ปีละประมาณ 7 ล้านคน ในจำนวนนี้ 75 % เป็นชาวต่างชาติ' },
  ],
};
