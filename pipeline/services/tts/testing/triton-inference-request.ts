/**
 * Inference requests as the Triton loopback server reads them: the JSON header and the inputs'
 * values from JSON `data` or from binary data after the header (`Inference-Header-Content-Length`,
 * per input `parameters.binary_data_size`), and Triton's checks of the inputs and requested outputs
 * against the CosyVoice2 model, whose failures the server answers with HTTP 400.
 */
import { tensorNumbers } from '../kserve-tensors.ts';

/** The inputs of the CosyVoice2 model, as its metadata lists them. */
export const INPUTS = [
  { name: 'reference_wav', datatype: 'FP32', shape: [-1, -1] },
  { name: 'reference_wav_len', datatype: 'INT32', shape: [-1, 1] },
  { name: 'reference_text', datatype: 'BYTES', shape: [-1, 1] },
  { name: 'target_text', datatype: 'BYTES', shape: [-1, 1] },
];

/** One input tensor of the request JSON. */
interface InputTensor {
  name?: unknown;
  datatype?: unknown;
  shape?: unknown;
  data?: unknown;
  parameters?: { binary_data_size?: unknown };
}

/** One requested output of the request JSON. */
interface RequestedOutput {
  name?: unknown;
  parameters?: { binary_data?: unknown };
}

/** The inference request JSON (the whole body, or the part before the binary data). */
export interface InferenceRequestHeader {
  inputs?: unknown;
  outputs?: unknown;
  parameters?: { binary_data_output?: unknown };
}

/** An input with its values decoded from JSON `data` or from binary data. */
export interface DecodedInput {
  name: unknown;
  datatype: unknown;
  shape: unknown;
  /** FP32 and INT32 values, row-major; null when a JSON value is not a number. */
  numbers: ArrayLike<number> | null;
  /** BYTES elements as UTF-8 text. */
  texts: string[];
}

/** An HTTP 400 answer: Triton rejected the request. */
export class BadInferenceRequest extends Error {}

/**
 * Splits a request body into its JSON header and decoded inputs: the whole body is JSON without an
 * `Inference-Header-Content-Length` header; with one, the inputs that carry `binary_data_size` take
 * their bytes, in input order, from what follows the JSON (FP32/INT32 little-endian, BYTES as 4-byte
 * little-endian length + bytes per element).
 *
 * @throws BadInferenceRequest (answered 400) when the header, the JSON or the binary data are malformed.
 */
export function parseInferenceRequest(
  body: Buffer,
  headerLengthValue: string | string[] | undefined,
): { header: InferenceRequestHeader; inputs: DecodedInput[] } {
  let headerLength = body.length;
  if (headerLengthValue !== undefined) {
    const value = Array.isArray(headerLengthValue) ? headerLengthValue.join(',') : headerLengthValue;
    if (!/^\s*\d+\s*$/.test(value))
      throw new BadInferenceRequest(`Unable to parse Inference-Header-Content-Length "${value}"`);
    headerLength = Number(value);
    if (headerLength > body.length)
      throw new BadInferenceRequest(
        `Inference-Header-Content-Length ${headerLength} exceeds the ${body.length}-byte body`,
      );
  }
  let header: InferenceRequestHeader;
  try {
    header = JSON.parse(body.subarray(0, headerLength).toString('utf8')) as InferenceRequestHeader;
  } catch (caught) {
    throw new BadInferenceRequest(`failed to parse the request JSON buffer: ${(caught as Error).message}`);
  }
  const tensors = Array.isArray(header.inputs) ? (header.inputs as InputTensor[]) : [];
  let offset = headerLength;
  const inputs = tensors.map((tensor): DecodedInput => {
    const size = tensor.parameters?.binary_data_size;
    if (size === undefined) {
      const data = Array.isArray(tensor.data) ? (tensor.data as unknown[]) : [];
      return {
        name: tensor.name,
        datatype: tensor.datatype,
        shape: tensor.shape,
        numbers: tensor.datatype === 'BYTES' ? [] : tensorNumbers(data),
        texts: tensor.datatype === 'BYTES' ? data.flat(Infinity).map(String) : [],
      };
    }
    const name = String(tensor.name);
    if (headerLengthValue === undefined)
      throw new BadInferenceRequest(
        `input '${name}' has binary data but the request lacks Inference-Header-Content-Length`,
      );
    if (tensor.data !== undefined) throw new BadInferenceRequest(`input '${name}' has both binary data and JSON data`);
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
      throw new BadInferenceRequest(`input '${name}' has binary_data_size ${JSON.stringify(size)}`);
    if (offset + size > body.length)
      throw new BadInferenceRequest(
        `unexpected size for input '${name}': binary_data_size ${size} but only ${body.length - offset} bytes remain`,
      );
    const bytes = body.subarray(offset, offset + size);
    offset += size;
    return {
      name: tensor.name,
      datatype: tensor.datatype,
      shape: tensor.shape,
      ...decodeBinaryInput(name, tensor.datatype, bytes),
    };
  });
  if (offset !== body.length)
    throw new BadInferenceRequest(
      `unexpected additional input data: ${body.length - offset} bytes after the inputs' binary data`,
    );
  return { header, inputs };
}

/** The values of one binary input; throws BadInferenceRequest for an unsupported datatype or bytes that do not split into elements. */
function decodeBinaryInput(name: string, datatype: unknown, bytes: Buffer): Pick<DecodedInput, 'numbers' | 'texts'> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (datatype === 'FP32' || datatype === 'INT32') {
    if (bytes.length % 4 !== 0)
      throw new BadInferenceRequest(
        `input '${name}' holds ${bytes.length} bytes, not a whole number of ${datatype} values`,
      );
    const numbers = new Array<number>(bytes.length / 4);
    for (let index = 0; index < numbers.length; index++)
      numbers[index] = datatype === 'FP32' ? view.getFloat32(index * 4, true) : view.getInt32(index * 4, true);
    return { numbers, texts: [] };
  }
  if (datatype === 'BYTES') {
    const texts: string[] = [];
    for (let position = 0; position < bytes.length;) {
      if (position + 4 > bytes.length)
        throw new BadInferenceRequest(
          `input '${name}': a BYTES element length is cut after ${bytes.length - position} bytes`,
        );
      const length = view.getUint32(position, true);
      if (position + 4 + length > bytes.length)
        throw new BadInferenceRequest(`input '${name}': a BYTES element of ${length} bytes exceeds the binary data`);
      texts.push(bytes.subarray(position + 4, position + 4 + length).toString('utf8'));
      position += 4 + length;
    }
    return { numbers: [], texts };
  }
  throw new BadInferenceRequest(
    `input '${name}' has datatype '${String(datatype)}', which this server does not read as binary data`,
  );
}

/** Whether the request asks for `waveform` as binary data (its own `binary_data`, else the request's `binary_data_output`). */
export function wantsBinaryWaveform(header: InferenceRequestHeader): boolean {
  const outputs = Array.isArray(header.outputs) ? (header.outputs as RequestedOutput[]) : [];
  const own = outputs.find((output) => output.name === 'waveform')?.parameters?.binary_data;
  return (own ?? header.parameters?.binary_data_output) === true;
}

/** Triton's check of the requested outputs: each must be one of the model's; the error message or null. */
export function checkRequestedOutputs(header: InferenceRequestHeader, modelName: string): string | null {
  if (header.outputs === undefined) return null;
  if (!Array.isArray(header.outputs)) return `outputs of the request for model '${modelName}' are not a list`;
  for (const output of header.outputs as RequestedOutput[])
    if (output.name !== 'waveform')
      return `unexpected inference output '${String(output.name)}' for model '${modelName}'`;
  return null;
}

/** Triton's checks of an inference request against the model's inputs; the error message or null. */
export function checkInferenceInputs(
  byName: Map<unknown, DecodedInput>,
  count: number,
  modelName: string,
): string | null {
  if (count !== INPUTS.length)
    return `expected ${INPUTS.length} inputs but got ${count} inputs for model '${modelName}'`;
  for (const expected of INPUTS) {
    const input = byName.get(expected.name);
    if (!input) return `unexpected inference input for model '${modelName}': missing '${expected.name}'`;
    if (input.datatype !== expected.datatype)
      return `inference input '${expected.name}' data-type is '${String(input.datatype)}', but model '${modelName}' expects '${expected.datatype}'`;
    if (!Array.isArray(input.shape)) return `inference input '${expected.name}' needs a shape`;
    if (input.numbers === null) return `inference input '${expected.name}' holds values that are not numbers`;
    const elements = (input.shape as unknown[]).reduce<number>((product, size) => product * Number(size), 1);
    const held = expected.datatype === 'BYTES' ? input.texts.length : input.numbers.length;
    if (elements !== held)
      return `unexpected number of elements for '${expected.name}': shape [${(input.shape as unknown[]).join(',')}] holds ${elements}, data holds ${held}`;
  }
  const wavLength = (byName.get('reference_wav')?.numbers as ArrayLike<number>).length;
  const length = (byName.get('reference_wav_len')?.numbers as ArrayLike<number>)[0];
  if (length !== wavLength) return `reference_wav_len ${length} differs from the ${wavLength} samples of reference_wav`;
  return null;
}
