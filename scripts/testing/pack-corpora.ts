/**
 * Small corpora written in each built-in pack's language, in the TopiOCQA raw-release layout, for the
 * offline build of every built-in pack (scripts/built-in-packs.test.ts). Each is one conversation of
 * three turns about the Eiffel Tower with years, a day-month-year date, a decimal and unit symbols
 * (`m`, `km`, `%`) as a writer of that language writes them, so the offline rules must speak every
 * number in the pack's language by its number library.
 */

/** One question and its answer. */
export interface PackCorpusTurn {
  question: string;
  answer: string;
}

/** The turns of each built-in pack's corpus, by pack code. */
export const PACK_CORPUS_TURNS: Readonly<Record<string, readonly PackCorpusTurn[]>> = {
  en: [
    { question: 'When was the Eiffel Tower built?', answer: 'Work began in 1887 and it opened on 31 March 1889.' },
    { question: 'How tall is it?', answer: 'It is 330 m tall, about 3.5 km from the Louvre.' },
    { question: 'Is it visited a lot?', answer: 'Yes, about 7 million people a year, 75 % of them from abroad.' },
  ],
  es: [
    {
      question: '¿Cuándo se construyó la Torre Eiffel?',
      answer: 'Las obras empezaron en 1887 y se inauguró el 31 de marzo de 1889.',
    },
    { question: '¿Qué altura tiene?', answer: 'Mide 330 m y está a 3,5 km del Louvre.' },
    { question: '¿Recibe muchas visitas?', answer: 'Sí, unos 7 millones al año, el 75 % del extranjero.' },
  ],
  fr: [
    {
      question: 'Quand la tour Eiffel a-t-elle été construite ?',
      answer: 'Les travaux ont commencé en 1887 et elle a ouvert le 31 mars 1889.',
    },
    { question: 'Quelle est sa hauteur ?', answer: 'Elle mesure 330 m et se trouve à 3,5 km du Louvre.' },
    {
      question: 'Est-elle très visitée ?',
      answer: 'Oui, environ 7 millions de visiteurs par an, dont 75 % d’étrangers.',
    },
  ],
  de: [
    {
      question: 'Wann wurde der Eiffelturm gebaut?',
      answer: 'Der Bau begann 1887, eröffnet wurde er am 31. März 1889.',
    },
    { question: 'Wie hoch ist er?', answer: 'Er ist 330 m hoch und steht 3,5 km vom Louvre entfernt.' },
    { question: 'Wird er oft besucht?', answer: 'Ja, von etwa 7 Millionen Menschen im Jahr, zu 75 % aus dem Ausland.' },
  ],
  ja: [
    { question: 'エッフェル塔はいつ建てられましたか？', answer: '1887年に着工し、1889年3月31日に開業しました。' },
    { question: '高さはどのくらいですか？', answer: '高さは330mで、ルーヴル美術館から3.5kmのところにあります。' },
    { question: '訪れる人は多いですか？', answer: 'はい、年に約700万人が訪れ、その75%が外国人です。' },
  ],
  zh: [
    { question: '埃菲尔铁塔是什么时候建的？', answer: '它于1887年开工，1889年3月31日开放。' },
    { question: '它有多高？', answer: '它高330米，距离卢浮宫约3.5 km。' },
    { question: '游客多吗？', answer: '多，每年约700万人，其中75%来自国外。' },
  ],
  ko: [
    { question: '에펠탑은 언제 지어졌나요?', answer: '1887년에 공사를 시작해서 1889년 3월 31일에 문을 열었습니다.' },
    { question: '높이는 얼마나 되나요?', answer: '높이는 330 m이고 루브르 박물관에서 3.5 km 떨어져 있습니다.' },
    { question: '방문객이 많나요?', answer: '네, 해마다 약 700만 명이 찾고 그중 75 %가 외국인입니다.' },
  ],
};

/**
 * The corpus of one pack as TopiOCQA raw-release records (one conversation, `Conversation_no` 1).
 *
 * @param code a key of {@link PACK_CORPUS_TURNS}, or any language code when `given` is passed.
 * @param given the turns, for a language that is not built in (default: the code's built-in corpus).
 * @returns the records, ready for `JSON.stringify`.
 * @throws RangeError for a code with no corpus.
 */
export function packCorpusRecords(
  code: string,
  given: readonly PackCorpusTurn[] | undefined = PACK_CORPUS_TURNS[code],
): Record<string, unknown>[] {
  const turns = given;
  if (turns === undefined) throw new RangeError(`no corpus for pack "${code}"`);
  const passage = turns.map((turn) => turn.answer).join(' ');
  return turns.map((turn, index) => ({
    Context: turns.slice(0, index).flatMap((earlier) => [earlier.question, earlier.answer]),
    Conversation_no: 1,
    Turn_no: index + 1,
    Question: turn.question,
    is_nq: false,
    Answer: turn.answer,
    Topic: 'Eiffel Tower',
    Topic_section: 'Introduction',
    Rationale: turn.answer,
    Additional_answers: [],
    Gold_passage: { id: `${code}-pack:1`, title: 'Eiffel Tower', text: passage },
  }));
}
