/** What `duplexsynth doctor` reports for each thing it looked for (./doctor.ts, ./doctor-services.ts). */

/** One thing `doctor` looked for. */
export interface DoctorCheck {
  /** What it is: `ffmpeg`, `espeak-ng voice cmn (zh)`, `DNSMOS models`, `llm.rewrite openai-compatible`. */
  name: string;
  /** Where it belongs: a Debian tool, a voice, model files or a configured service. */
  group: 'tool' | 'voice' | 'model' | 'service';
  /** Found (a tool, a file) or reachable (a service). */
  ok: boolean;
  /** Where it was found, or what is wrong. */
  detail: string;
  /** What to do when it is missing (absent when `ok`). */
  fix?: string;
}
