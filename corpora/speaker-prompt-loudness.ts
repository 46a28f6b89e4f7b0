/** The loudness targets of speaker prompt clips, apart from the measuring code (./speaker-prompt-plan.ts). */

/** Loudness target of the written clips. */
export interface SpeakerPromptLoudness {
  /** Integrated loudness to reach, LUFS (EBU R 128 programme target: −23). */
  targetLufs: number;
  /** Highest true peak allowed after the gain, dBTP (EBU R 128: −1). */
  maximumTruePeakDbtp: number;
}

/** The EBU R 128 targets: −23 LUFS integrated, true peak at most −1 dBTP (EBU R 128, 2020). */
export const EBU_R128_LOUDNESS: Readonly<SpeakerPromptLoudness> = Object.freeze({
  targetLufs: -23,
  maximumTruePeakDbtp: -1,
});
