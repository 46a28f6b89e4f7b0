/**
 * Short tag answers to a yes/no question for `spoken-turns.ts`: "was it …?" → "Yes, it was." /
 * "No, it wasn't."; "are you …?" → "Yes, I am."; a question that does not start with an auxiliary
 * verb gets "Yes, that's right." / "No, that's not right.".
 */

const CONTRACTED_NEGATIVES: Record<string, string> = {
  is: "isn't",
  are: "aren't",
  was: "wasn't",
  were: "weren't",
  do: "don't",
  does: "doesn't",
  did: "didn't",
  has: "hasn't",
  have: "haven't",
  had: "hadn't",
  can: "can't",
  could: "couldn't",
  will: "won't",
  would: "wouldn't",
  should: "shouldn't",
  may: 'may not',
  might: 'might not',
  must: "mustn't",
};
const SUBJECT_PRONOUNS: Record<string, string> = {
  it: 'it',
  he: 'he',
  she: 'she',
  they: 'they',
  you: 'I',
  i: 'you',
  we: 'you',
  this: 'it',
  that: 'it',
  there: 'there',
  these: 'they',
  those: 'they',
};

/** The tag answer to a yes/no question (module comment); `positive` for yes. */
export function yesNoReply(question: string, positive: boolean): string {
  const match =
    /^(?:(?:and|so|but|then|also|ok|okay|well),?\s+)?(is|are|am|was|were|do|does|did|has|have|had|can|could|will|would|should|may|might|must)\s+([a-z']+)/i.exec(
      question.trim().toLowerCase(),
    );
  if (match === null) return positive ? "Yes, that's right." : "No, that's not right.";
  let auxiliary = match[1] ?? 'is';
  const subjectWord = match[2] ?? '';
  const plural = auxiliary === 'are' || auxiliary === 'were' || auxiliary === 'do' || auxiliary === 'have';
  const subject = SUBJECT_PRONOUNS[subjectWord] ?? (plural ? 'they' : 'it');
  if (subject === 'I') auxiliary = auxiliary === 'are' ? 'am' : auxiliary === 'were' ? 'was' : auxiliary;
  if (subject === 'you') auxiliary = auxiliary === 'am' ? 'are' : auxiliary === 'was' ? 'were' : auxiliary;
  if (positive) return `Yes, ${subject} ${auxiliary}.`;
  if (subject === 'I' && auxiliary === 'am') return "No, I'm not.";
  return `No, ${subject} ${CONTRACTED_NEGATIVES[auxiliary] ?? `${auxiliary} not`}.`;
}
