/**
 * Core data types shared by every stage. Plain values, no behaviour.
 *
 * Time convention: everything that takes part in event computation is in **integer centiseconds**
 * (0.01 s), rounded once at input (docs/events.md: "Work in integer centiseconds
 * throughout"). Audio-level code works in samples; conversion happens at the boundary.
 */

/** Integer number of centiseconds (0.01 s). */
export type Centiseconds = number;

/** Benchmark channel index. In MT-QA data channel 1 is the user, channel 0 the system (docs/dataset-format.md). */
export type Channel = 0 | 1;

/** One contiguous stretch of speech on one channel, `[start, end]` in centiseconds, start < end. */
export interface SpeechSegment {
  start: Centiseconds;
  end: Centiseconds;
}

/** Speech segments of the two channels, each sorted by start and non-overlapping. */
export type ChannelSegments = Record<Channel, SpeechSegment[]>;

/** Event types the benchmark loader knows (docs/dataset-format.md). */
export type BenchmarkEventType = 'TURN' | 'SHORTPAUSE' | 'BC' | 'TURN_HOLD' | 'TURN_SHIFT' | 'BARGE_IN';

/**
 * One benchmark event, times in centiseconds. For TURN_SHIFT with overlap, start > end
 * (docs/events.md rule 4: `TURN_SHIFT [floor.end, turn.start]`).
 */
export interface BenchmarkEvent {
  event: BenchmarkEventType;
  start: Centiseconds;
  end: Centiseconds;
}

/** The events of one dialogue, per channel, in the order they are written. */
export type ChannelEvents = Record<Channel, BenchmarkEvent[]>;

/** One word (Japanese: one morpheme) of a word-alignment (`txt_align`) file. */
export interface AlignedWord {
  channel: Channel;
  start: Centiseconds;
  end: Centiseconds;
  word: string;
}

/**
 * A language, by its BCP-47 tag (`en`, `ja`, `zh`, `de`, …; pipeline/model/language-code.ts). What the
 * pipeline knows of a language is data looked up by this code, not a closed list of types.
 */
export type Language = string;

/** Who speaks an utterance in an MT-QA dialogue. */
export type SpeakerRole = 'user' | 'system';

/** What an utterance is for; used for role-aware checks (docs/events.md, "Synthetic dialogues"). */
export type UtteranceKind = 'question' | 'answer' | 'backchannel';

/** One turn of an ingested source conversation (TopiOCQA), after quirk handling. */
export interface SourceTurn {
  /** 1-based, contiguous within the conversation. */
  turnNumber: number;
  question: string;
  /** null when the corpus has no answer for this turn (a final question without answer). */
  answer: string | null;
  /** false when the corpus marks the answer `UNANSWERABLE`. */
  answerable: boolean;
  topic: string;
  topicSection?: string;
  isNaturalQuestions?: boolean;
  rationale?: string;
  additionalAnswers?: string[];
  /** true when the topic differs from the previous turn's topic. */
  topicSwitch: boolean;
}

/** One ingested conversation. */
export interface SourceConversation {
  /** Dialogue id used everywhere downstream, e.g. `topiocqa_dev_0001`. */
  id: string;
  /** Path of the corpus file it came from. */
  sourceFile: string;
  conversationNumber: number;
  turns: SourceTurn[];
  /** Language the corpus is written in (`corpus.language`); absent = English (TopiOCQA). */
  language?: Language;
}

/** One question/answer pair of text as it moves through rewrite and translation. */
export interface TextTurn {
  turnNumber: number;
  question: string;
  /** Empty string never; null when the source had no answer (the utterance is then not spoken). */
  answer: string | null;
  /**
   * Where the LLM rewrite marked that a speaker could pause inside the question: the number of words
   * of `question` before the pause (pipeline/text/turn-hold-split.ts `pausePointOf`); absent unmarked.
   */
  pausePoint?: number;
}

/** The spoken text of a dialogue in one language, with every earlier version kept for the metadata. */
export interface DialogueText {
  id: string;
  language: Language;
  /** Written source text (TopiOCQA). */
  source: TextTurn[];
  /** English spoken-style rewrite. */
  spoken: TextTurn[];
  /** Text to speak in `language` (equals `spoken` for English). */
  final: TextTurn[];
  /** Which backends produced `spoken` and `final`. */
  producedBy: { rewrite: string; translate?: string };
}

/** One utterance to synthesize and place. */
export interface ScriptUtterance {
  /** Position in the dialogue, 0-based. */
  index: number;
  turnNumber: number;
  kind: UtteranceKind;
  role: SpeakerRole;
  text: string;
  /**
   * For a question spoken in two parts around a pause (a user TURN_HOLD, pipeline/text/turn-hold-split.ts):
   * which part this is; absent for a whole utterance.
   */
  part?: 1 | 2;
}

/**
 * A real two-party conversation used as a reference for turn-taking statistics and voice prompts
 * (lhotse style: ONE two-channel recording, one supervision per utterance pointing at its channel).
 * Every reference corpus loader in corpora/ produces this shape.
 */
export interface ReferenceRecording {
  /** Unique id within its corpus, e.g. CANDOR conversation id or MagicData session. */
  id: string;
  /** Corpus format it came from: `stereo-wav`, `candor`, `magicdata`, `rttm`, `m3-events`, `nxt`, `textgrid`, `ctm`. */
  format: string;
  /** Files it was read from. */
  sources: string[];
  /** Length of the recording in centiseconds (end of the last speech when the audio is not known). */
  durationCs: Centiseconds;
  /** Speech segments per channel, sorted, non-overlapping within a channel. */
  segments: ChannelSegments;
  /** Speaker id of each channel (strings, as the corpus writes them; CANDOR's hex ids stay strings). */
  channelSpeakers: Record<Channel, string>;
  /** Audio file with one speaker per channel (or one file per channel), when the corpus has audio. */
  audio?: { path: string; channel: Channel }[];
  /** Transcribed utterances, when the corpus has transcripts (for the speaker prompt pool). */
  supervisions?: ReferenceSupervision[];
  /** What the loader did that a user should know (dropped speakers, skipped lines), one line each. */
  notes: string[];
  /**
   * Malformed records the reader skipped (corpora/skipped-records.ts), each `FILE:LINE: REASON` once;
   * absent when none were skipped.
   */
  skippedRecords?: string[];
}

/** One transcribed utterance of a reference recording. */
export interface ReferenceSupervision {
  channel: Channel;
  start: Centiseconds;
  end: Centiseconds;
  speaker: string;
  text: string;
  /**
   * Word timings inside the utterance (channel = the supervision's channel, integer centiseconds,
   * start < end, in time order), when the corpus has them (word-level formats: `nxt`, `textgrid`,
   * `ctm`); the chat track writes them to `txt_align`. lhotse keeps these as a supervision's alignment.
   */
  words?: AlignedWord[];
}

/** A time span the engine reports inside its own output, e.g. one phoneme. */
export interface EngineTiming {
  /** Engine label, e.g. an Open JTalk phoneme (`k`, `o`, `N`, `cl`, `pau`, `sil`). */
  label: string;
  /** Seconds from the start of the returned audio. */
  start: number;
  /** Seconds from the start of the returned audio; >= start. */
  end: number;
}
