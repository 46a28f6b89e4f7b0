/** The header facts of a WAV file (channels, sample rate, samples per channel), from its chunk headers only. */
import { WavDecodeError } from '../audio/raw-audio.ts';
import { readWavFileLayout } from '../audio/wav.ts';
import { DatasetReadError } from '../quality/dataset-files.ts';
import { describeFileSystemError } from '../storage/file-system-errors.ts';
import { openInputFile } from '../storage/read-input-file.ts';

/** Facts from a WAV header. */
export interface WavInfo {
  channels: number;
  /** Hz. */
  sampleRate: number;
  /** Samples per channel. */
  sampleCount: number;
  /** Whether the file ends before the data its header declares (cut short: a copy or a write that did not finish). */
  truncated: boolean;
}

/**
 * Reads the header of the WAV file `file` (pipeline/audio/wav.ts; the samples are not read).
 * A file that ends before the data its header declares is `truncated`, its `sampleCount` the whole
 * frames that are there (a file cut in the middle of a frame is cut short, not malformed).
 * The file is first opened and checked as every input file is (pipeline/storage/read-input-file.ts):
 * a FIFO, a device such as `/dev/zero` or a socket is refused before its header is read by path.
 * @throws WavDecodeError naming the file when it is not a RIFF/WAVE file with a `fmt ` and a `data`
 *   chunk, or its complete data is not a whole number of frames; InputFileError when it is not a
 *   regular file; the file-system error when it cannot be read
 */
export async function readWavInfo(file: string): Promise<WavInfo> {
  await (await openInputFile(file)).handle.close();
  const layout = readWavFileLayout(file);
  if (layout === undefined) throw new WavDecodeError(file, 'not a RIFF/WAVE file with a fmt and a data chunk');
  const { channels, sampleRate, bitsPerSample } = layout.format;
  const frameBytes = channels * (bitsPerSample / 8);
  const truncated = layout.declaredDataBytes !== 0xffffffff && layout.declaredDataBytes > layout.dataBytes;
  if (!(frameBytes > 0) || (!truncated && layout.dataBytes % frameBytes !== 0))
    throw new WavDecodeError(
      file,
      `data chunk of ${layout.dataBytes} bytes is not a whole number of ${frameBytes}-byte frames`,
    );
  return { channels, sampleRate, sampleCount: Math.floor(layout.dataBytes / frameBytes), truncated };
}

/**
 * Refuses a dialogue's WAV that ends before the data its header declares (a copy or a write that did
 * not finish): an export of it would describe a shorter recording than the dataset's, with words,
 * supervisions and events past its end (lhotse's own validation rejects such a recording).
 * @param info the file's header facts (readWavInfo)
 * @param dialogue the dialogue the WAV belongs to (its id and duration, for the message)
 * @throws DatasetReadError naming the file and the dialogue
 */
function assertWavComplete(info: WavInfo, file: string, dialogue: { id: string; durationSeconds: number }): void {
  if (info.truncated) {
    throw new DatasetReadError(
      `${file}: WAV of dialogue ${dialogue.id} ends before the data its header declares (${(info.sampleCount / info.sampleRate).toFixed(2)} s of ${dialogue.durationSeconds} s are there): the file was cut short; rebuild or copy it again`,
    );
  }
}

/**
 * The header facts of a dialogue's WAV that an export is about to use, checked complete: what every
 * export that reads the audio calls first.
 * @param file the WAV (the dataset's 16 kHz file or the full-band master)
 * @param dialogue its dialogue (id and duration, for the messages)
 * @param use what the export takes the file for, for the message (`the huggingface export's audio column`)
 * @throws DatasetReadError, one line naming the file, the dialogue and the cause: missing or
 *   unreadable (in words, pipeline/storage/file-system-errors.ts), not a WAV, malformed, cut short
 */
export async function readDialogueWav(
  file: string,
  dialogue: { id: string; durationSeconds: number },
  use: string,
): Promise<WavInfo> {
  let info: WavInfo;
  try {
    info = await readWavInfo(file);
  } catch (error) {
    if (error instanceof WavDecodeError)
      throw new DatasetReadError(`${file}: WAV of dialogue ${dialogue.id} (${use}): ${error.reason}`, { cause: error });
    throw new DatasetReadError(describeFileSystemError(error, file, `WAV of dialogue ${dialogue.id} (${use})`), {
      cause: error,
    });
  }
  assertWavComplete(info, file, dialogue);
  return info;
}
