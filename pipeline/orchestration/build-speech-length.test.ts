/**
 * The speech-length check in a whole build (`quality.speechLength`, on by default without
 * `quality.speechRecognition`): CosyVoice2 on a loopback server with zero-shot voice prompts. A server
 * that speaks a voice prompt's transcript before one utterance (every time it is asked for) gets that
 * utterance resynthesized once and its dialogue quarantined, the reason naming the utterance and the
 * measured and expected seconds; a server that speaks only the text quarantines nothing. The same
 * with cross-lingual voices, whose prompts have no transcript: their clips are measured at the
 * language's typical rate.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCosyVoiceLoopbackServer } from '../services/tts/testing/cosyvoice-loopback-server.ts';
import type { FaultScript } from '../services/tts/testing/loopback-speech.ts';
import { writePromptFixture, writePromptManifest } from '../services/tts/testing/prompt-fixtures.ts';
import { runBuild } from './build.ts';
import { loopbackCosyVoiceConfig } from './testing/loopback-cosyvoice-config.ts';

/** The first transcript of writePromptManifest's speakers (pipeline/services/tts/testing/prompt-fixtures.ts). */
const LEAKED_PROMPT = 'I grew up near the sea and I still love the sound of waves.';

let scratch: string;
let manifest: string;
/** Cross-lingual voices of two espeak-ng prompts: no transcript, so no tempo of their own. */
let untranscribed: { user: Record<string, string>; system: Record<string, string> };

beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'duplexsynth-speech-length-'));
  const prompts = path.join(scratch, 'prompts');
  await mkdir(prompts, { recursive: true });
  manifest = await writePromptManifest(prompts);
  const [user, system] = await Promise.all(
    ['Good morning, how can I help you today?', 'The weather here has been lovely all week long.'].map(
      (transcript, index) => writePromptFixture(prompts, transcript, { pitch: 30 + index * 40, minimumSeconds: 3 }),
    ),
  );
  untranscribed = {
    user: { mode: 'cross-lingual', promptWav: user!.path },
    system: { mode: 'cross-lingual', promptWav: system!.path },
  };
});

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/**
 * Builds the first two demo dialogues in English with CosyVoice2 on a loopback server whose replies
 * start with `leading(text)` (nothing when null); the requests' texts in order.
 * @param voices the two voices (default: the speakers of the prompt manifest, with their transcripts)
 */
async function buildWith(name: string, leading: (text: string) => string | null, voices?: typeof untranscribed) {
  const texts: string[] = [];
  const faults: FaultScript = ({ text }) => {
    texts.push(text);
    const extra = leading(text);
    return extra === null ? null : { kind: 'leading-speech', text: extra };
  };
  const cosyvoice = await startCosyVoiceLoopbackServer({ faults });
  try {
    const config = await loopbackCosyVoiceConfig({
      name,
      scratch,
      url: cosyvoice.url,
      voices: voices ? { voices } : { speakerPrompts: { manifest } },
      quality: { enabled: false },
    });
    expect(config.quality.speechLength).not.toBeNull();
    return { report: await runBuild(config), texts, routes: cosyvoice.requests.map((request) => request.route) };
  } finally {
    await cosyvoice.close();
  }
}

describe('the speech-length check in a build', () => {
  it.each([
    {
      voices: "the manifest's voices (with transcripts)",
      untranscribed: false,
      tempo: "at the voice's tempo \\(\\d\\.\\d\\d\\)",
      routes: null,
    },
    {
      voices: 'voices without a transcript',
      untranscribed: true,
      tempo: "at the language's typical rate",
      routes: ['/inference_cross_lingual'],
    },
  ])('$voices: quarantines the dialogue whose utterance is spoken after a leaked voice prompt', async (kind) => {
    let leaked: string | null = null;
    const { report, texts, routes } = await buildWith(
      `leaked-${kind.untranscribed ? 'untranscribed' : 'transcribed'}`,
      (text) => {
        // the first utterance of six to ten words synthesized, every time it is asked for
        const words = text.split(/\s+/).length;
        if (leaked === null && words >= 6 && words <= 10) leaked = text;
        return text === leaked ? LEAKED_PROMPT : null;
      },
      kind.untranscribed ? untranscribed : undefined,
    );
    if (kind.routes !== null) expect(new Set(routes)).toEqual(new Set(kind.routes));
    expect(leaked).not.toBeNull();
    // the first reply and one resynthesis, although the retry policy allows two retries
    expect(texts.filter((text) => text === leaked)).toHaveLength(2);
    const dataset = report.datasets.find((entry) => entry.variant === 'default')!;
    expect(dataset.dialogues).toBe(1);
    expect(dataset.failed).toHaveLength(1);
    const reason = dataset.failed[0]!.reason;
    expect(reason).toContain(`synthesis failed for "${leaked}" (extra-speech): quarantined after 2 attempts`);
    expect(reason).toMatch(
      new RegExp(
        `: \\d+\\.\\d\\d s of speech where the text takes \\d+\\.\\d\\d s ${kind.tempo} \\(accepted up to \\d+\\.\\d\\d s\\)`,
      ),
    );
    // the leaked words come before the text, so the span says where the extra speech is
    if (!kind.untranscribed) expect(reason).toMatch(/ s of speech before its first or after its last word/);
  });

  it('quarantines nothing when the server speaks only the text', async () => {
    const { report, texts } = await buildWith('clean', () => null);
    const dataset = report.datasets.find((entry) => entry.variant === 'default')!;
    expect(dataset.failed).toEqual([]);
    expect(dataset.dialogues).toBe(2);
    expect(texts.length).toBeGreaterThan(10);
  });

  it('quarantines nothing of a voice without a transcript when the server speaks only the text', async () => {
    const { report, texts } = await buildWith('clean-untranscribed', () => null, untranscribed);
    const dataset = report.datasets.find((entry) => entry.variant === 'default')!;
    expect(dataset.failed).toEqual([]);
    expect(dataset.dialogues).toBe(2);
    // every text asked for once: no clip was resynthesized
    expect(new Set(texts).size).toBe(texts.length);
  });
});
