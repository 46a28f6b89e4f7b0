/**
 * The numbers of DNS-Challenge `DNSMOS/dnsmos_local.py` that DNSMOS (./dnsmos.ts) reproduces: the
 * model input sizes, the polynomials mapping raw P.835 outputs to MOS, and the plan of 9.01 s windows
 * over a signal (steps 2, 3 and 5 of ./dnsmos.ts).
 */

/** Sampling rate the models expect, Hz (`SAMPLING_RATE` in dnsmos_local.py). */
export const DNSMOS_SAMPLE_RATE = 16000;
/** Window length in seconds (`INPUT_LENGTH` in dnsmos_local.py). */
export const DNSMOS_INPUT_SECONDS = 9.01;
/** Window length in samples: `int(9.01 * 16000)` = 144160. */
export const DNSMOS_WINDOW_SAMPLES = Math.trunc(DNSMOS_INPUT_SECONDS * DNSMOS_SAMPLE_RATE);
/** Hop between windows in samples (`hop_len_samples = fs` in dnsmos_local.py): one second. */
export const DNSMOS_HOP_SAMPLES = DNSMOS_SAMPLE_RATE;
/** The P.808 front end drops the last 160 samples of the window (`audio_seg[:-160]`): 144000 samples. */
export const P808_INPUT_SAMPLES = DNSMOS_WINDOW_SAMPLES - 160;
/** P.808 front end (`audio_melspec` in dnsmos_local.py): n_fft = frame_size + 1 = 321. */
export const P808_FFT_SIZE = 321;
/** P.808 front end hop length in samples. */
export const P808_HOP_LENGTH = 160;
/** P.808 front end mel band count. */
export const P808_MEL_BANDS = 120;
/** Frames of the P.808 input: 1 + floor((144000 + 2 * 160 - 321) / 160) = 900 (model input [N, 900, 120]). */
export const P808_FRAME_COUNT =
  1 + Math.floor((P808_INPUT_SAMPLES + 2 * Math.floor(P808_FFT_SIZE / 2) - P808_FFT_SIZE) / P808_HOP_LENGTH);

/**
 * Polynomials mapping raw model outputs to MOS, highest power first (`np.poly1d` coefficient order),
 * copied from `get_polyfit_val` in DNS-Challenge `dnsmos_local.py`. `standard` goes with
 * `sig_bak_ovr.onnx`, `personalized` with the pDNSMOS model (`p_sig_bak_ovr.onnx`).
 */
export const DNSMOS_POLYNOMIALS = {
  standard: {
    ovrl: [-0.06766283, 1.11546468, 0.04602535],
    sig: [-0.08397278, 1.22083953, 0.0052439],
    bak: [-0.13166888, 1.60915514, -0.39604546],
  },
  personalized: {
    ovrl: [-0.00533021, 0.005101, 1.18058466, -0.11236046],
    sig: [-0.01019296, 0.02751166, 1.19576786, -0.24348726],
    bak: [-0.04976499, 0.44276479, -0.1644611, 0.96883132],
  },
} as const;

/**
 * Evaluates a polynomial given highest power first, by Horner's rule in float64, the way
 * `numpy.polyval` / `np.poly1d.__call__` does (`y = y * x + c` for each coefficient).
 */
export function evaluatePolynomial(coefficientsHighestFirst: readonly number[], x: number): number {
  let y = 0;
  for (const coefficient of coefficientsHighestFirst) y = y * x + coefficient;
  return y;
}

/** Raw or mapped P.835 values of one window or one clip. */
export interface P835Values {
  sig: number;
  bak: number;
  ovrl: number;
}

/**
 * Maps raw `sig_bak_ovr` outputs to MOS with {@link DNSMOS_POLYNOMIALS} (`get_polyfit_val` of
 * dnsmos_local.py). `personalized` selects the pDNSMOS polynomials.
 */
export function mapDnsmosRawScores(raw: P835Values, personalized: boolean): P835Values {
  const polynomials = personalized ? DNSMOS_POLYNOMIALS.personalized : DNSMOS_POLYNOMIALS.standard;
  return {
    sig: evaluatePolynomial(polynomials.sig, raw.sig),
    bak: evaluatePolynomial(polynomials.bak, raw.bak),
    ovrl: evaluatePolynomial(polynomials.ovrl, raw.ovrl),
  };
}

/** Options of the window plan. */
export interface DnsmosWindowOptions {
  /**
   * true (default): window ends are `Math.trunc((idx + 9.01) * 16000)` in float64, exactly like the
   * reference's `int((idx + INPUT_LENGTH) * hop_len_samples)`, so the windows the reference skips
   * (that expression rounds to 144159 samples for idx 7..23, 119.., and others) are skipped here too
   * and scores match published DNSMOS numbers. false: every window is `[idx * 16000, idx * 16000 +
   * 144160)` and only windows running past the end are skipped.
   */
  referenceWindowEnds?: boolean;
  /**
   * Seconds between window starts. Default 1 (`hop_len_samples = fs`, the reference: every second of
   * speech is in up to nine windows). Another value scores the windows `[idx × hop, idx × hop + 144160)`
   * (hop = `round(hopSeconds × 16000)` samples) that fit in the extended signal, `floor((length −
   * 144160) / hop) + 1` of them, and `referenceWindowEnds` does not apply (the reference has no other
   * hop: its window end `(idx + 9.01) × hop_len_samples` only means 9.01 s when the hop is one second).
   * 9.01 scores non-overlapping windows: about 1/9 of the model runs of a long channel, scores that
   * are means over fewer windows (no longer the published numbers).
   */
  hopSeconds?: number;
}

/** {@link DnsmosWindowOptions.hopSeconds} of the reference, s. */
export const DNSMOS_REFERENCE_HOP_SECONDS = 1;

/** One analysed window, in samples of the extended (doubled) 16 kHz signal: `[start, end)`. */
export interface DnsmosWindow {
  index: number;
  start: number;
  end: number;
}

/** The length handling and windowing of dnsmos_local.py for one signal. */
export interface DnsmosWindowPlan {
  /** Length of the 16 kHz signal before doubling, samples. */
  originalLength: number;
  /** Length after doubling (`while len(audio) < 144160: audio = np.append(audio, audio)`), samples. */
  extendedLength: number;
  /** How many times the signal was doubled. */
  doublings: number;
  /** `num_hops = trunc(floor(extendedLength / 16000) - 9.01) + 1`. */
  hopCount: number;
  /** The windows that are scored, each exactly 144160 samples long. */
  windows: DnsmosWindow[];
  /** Indices `idx < hopCount` whose slice was shorter than 144160 samples, hence skipped. */
  skippedWindowIndices: number[];
}

/**
 * The windows dnsmos_local.py scores for a 16 kHz signal of `sampleCount` samples (see the module
 * comment, steps 2 and 3). Example: 3 s = 48000 samples doubles to 96000 then 192000 (12 s),
 * `num_hops = trunc(12 - 9.01) + 1 = 3`, windows start at 0, 16000, 32000. With `hopSeconds` 9.01, a
 * 60 s signal (960000 samples) has `floor((960000 - 144160) / 144160) + 1 = 6` windows (the reference: up to 51).
 * @throws RangeError when `sampleCount` is not a positive integer (the reference loops forever on
 *   empty audio), or the hop is under one sample.
 */
export function planDnsmosWindows(sampleCount: number, options: DnsmosWindowOptions = {}): DnsmosWindowPlan {
  if (!Number.isInteger(sampleCount) || sampleCount < 1) {
    throw new RangeError(`DNSMOS needs at least one sample, got ${sampleCount}`);
  }
  const referenceWindowEnds = options.referenceWindowEnds ?? true;
  const hopSeconds = options.hopSeconds ?? DNSMOS_REFERENCE_HOP_SECONDS;
  const hopSamples = Math.round(hopSeconds * DNSMOS_SAMPLE_RATE);
  if (!Number.isFinite(hopSeconds) || hopSamples < 1)
    throw new RangeError(`DNSMOS hop must be at least one sample (1/16000 s), got ${hopSeconds} s`);
  let extendedLength = sampleCount;
  let doublings = 0;
  while (extendedLength < DNSMOS_WINDOW_SAMPLES) {
    extendedLength *= 2;
    doublings++;
  }
  if (hopSeconds !== DNSMOS_REFERENCE_HOP_SECONDS) {
    const hopCount = Math.floor((extendedLength - DNSMOS_WINDOW_SAMPLES) / hopSamples) + 1;
    const windows = Array.from({ length: hopCount }, (_, index) => ({
      index,
      start: index * hopSamples,
      end: index * hopSamples + DNSMOS_WINDOW_SAMPLES,
    }));
    return { originalLength: sampleCount, extendedLength, doublings, hopCount, windows, skippedWindowIndices: [] };
  }
  const hopCount = Math.trunc(Math.floor(extendedLength / DNSMOS_SAMPLE_RATE) - DNSMOS_INPUT_SECONDS) + 1;
  const windows: DnsmosWindow[] = [];
  const skippedWindowIndices: number[] = [];
  for (let index = 0; index < hopCount; index++) {
    const start = Math.trunc(index * DNSMOS_HOP_SAMPLES);
    const nominalEnd = referenceWindowEnds
      ? Math.trunc((index + DNSMOS_INPUT_SECONDS) * DNSMOS_HOP_SAMPLES)
      : start + DNSMOS_WINDOW_SAMPLES;
    const end = Math.min(nominalEnd, extendedLength);
    if (end - start < DNSMOS_WINDOW_SAMPLES) skippedWindowIndices.push(index);
    else windows.push({ index, start, end: start + DNSMOS_WINDOW_SAMPLES });
  }
  return { originalLength: sampleCount, extendedLength, doublings, hopCount, windows, skippedWindowIndices };
}

/**
 * Appends the signal to itself until it has at least 144160 samples, as dnsmos_local.py does
 * (`np.append(audio, audio)` in a loop). Returns the input itself when it is long enough already.
 * @throws RangeError for an empty signal.
 */
export function extendByDoubling(samples: Float32Array): Float32Array {
  if (samples.length === 0) throw new RangeError('DNSMOS needs at least one sample, got an empty signal');
  if (samples.length >= DNSMOS_WINDOW_SAMPLES) return samples;
  let length = samples.length;
  while (length < DNSMOS_WINDOW_SAMPLES) length *= 2;
  const extended = new Float32Array(length);
  extended.set(samples, 0);
  for (let filled = samples.length; filled < length; filled *= 2) extended.copyWithin(filled, 0, filled);
  return extended;
}
