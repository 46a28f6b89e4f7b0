/**
 * The DNSMOS ONNX models in onnxruntime: the session options, opening one model file with its input
 * checked, and running the P.835 and P.808 models on a batch of windows (step 4 of ./dnsmos.ts).
 */
import * as ort from 'onnxruntime-node';
import path from 'node:path';
import type { P835Values } from './dnsmos-windows.ts';
import { ONNXRUNTIME_NO_SPINNING } from '../onnxruntime-session.ts';

/**
 * onnxruntime session options for DNSMOS from an execution provider and an intra-op thread count:
 * 'cpu' (default) or 'cuda' (onnxruntime-node's CUDA provider; needs the CUDA build of its shared
 * libraries, which `npm install` does not fetch here, and a GPU). `intraOpThreads` null: onnxruntime's
 * default (one per physical core). The thread pools block instead of spinning
 * ({@link ONNXRUNTIME_NO_SPINNING}, ../onnxruntime-session.ts).
 */
export function dnsmosSessionOptions(
  executionProvider: 'cpu' | 'cuda' = 'cpu',
  intraOpThreads: number | null = null,
): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: [executionProvider],
    ...(intraOpThreads !== null ? { intraOpNumThreads: intraOpThreads } : {}),
    extra: ONNXRUNTIME_NO_SPINNING,
  };
}

/**
 * Opens `file` of `directory` as an onnxruntime session and checks its input: one input named
 * `input_1`, float32 of `expectedShape` after the batch dimension.
 *
 * @throws the onnxruntime error when the file is not a loadable model; Error when the input differs.
 */
export async function openDnsmosSession(
  directory: string,
  file: string,
  expectedShape: readonly (number | string)[],
  sessionOptions: ort.InferenceSession.SessionOptions,
): Promise<ort.InferenceSession> {
  const session = await ort.InferenceSession.create(path.join(directory, file), sessionOptions);
  const input = session.inputMetadata[0];
  if (session.inputNames.length !== 1 || session.inputNames[0] !== 'input_1' || input === undefined) {
    throw new Error(`${file}: expected one input named input_1, got ${JSON.stringify(session.inputNames)}`);
  }
  if (input.isTensor) {
    const shape = input.shape.slice(1);
    if (input.type !== 'float32' || JSON.stringify(shape) !== JSON.stringify(expectedShape.slice(1))) {
      throw new Error(
        `${file}: expected input_1 float32 [N, ${expectedShape.slice(1).join(', ')}], got ${input.type} ${JSON.stringify(input.shape)}`,
      );
    }
  }
  return session;
}

/** Raw [SIG, BAK, OVRL] of each of the `windows` windows of a [windows, 144160] input (output [windows, 3]). */
export async function runP835(
  session: ort.InferenceSession,
  input: ort.Tensor,
  windows: number,
): Promise<P835Values[]> {
  const output = await session.run({ input_1: input });
  const tensor = output[session.outputNames[0]!]!;
  const data = tensor.data as Float32Array;
  if (data.length !== 3 * windows)
    throw new Error(
      `P.835 model returned ${data.length} values for ${windows} windows, expected ${3 * windows} (SIG, BAK, OVRL each)`,
    );
  return Array.from({ length: windows }, (_, window) => ({
    sig: data[3 * window]!,
    bak: data[3 * window + 1]!,
    ovrl: data[3 * window + 2]!,
  }));
}

/** P.808 MOS of each of the `windows` windows of a [windows, 900, 120] input (output [windows, 1]). */
export async function runP808(session: ort.InferenceSession, input: ort.Tensor, windows: number): Promise<number[]> {
  const output = await session.run({ input_1: input });
  const data = output[session.outputNames[0]!]!.data as Float32Array;
  if (data.length !== windows)
    throw new Error(`P.808 model returned ${data.length} values for ${windows} windows, expected ${windows}`);
  return Array.from(data);
}
