/**
 * Export to lhotse Shar, the sharded layout lhotse reads sequentially for training
 * (`CutSet.from_shar(in_dir=EXPORT/shar)`; the layout of lhotse-speech/lhotse
 * `lhotse/shar/writers/shar.py`, read by `lhotse/shar/readers/lazy.py` and
 * `lhotse/shar/readers/tar.py`), in the folder `shar/` of the export:
 *
 * ```
 * cuts.000000.jsonl.gz       one MultiCut per dialogue (lhotse.ts lhotseCut), gzip JSONL
 * recording.000000.tar       per cut, in the cuts' order: {cut id}.wav (the audio file's bytes),
 *                            then {cut id}.json (the Recording manifest with its one source
 *                            {"type": "shar", "channels": [0, 1], "source": ""})
 * cuts.000001.jsonl.gz ...   the next `shardSize` dialogues (the numbers have 6 digits, from 0)
 * ```
 *
 * - The shards are in `shar/`, not beside `duplexsynth-export.json`: lhotse takes every file of
 *   `in_dir` (but `.idx`) as a field with one file per shard, and the marker would be one.
 * - Each cut's `recording` is the same placeholder: the reader pairs the cut with the next tar
 *   member pair (it checks that the member's name without extension is the cut's id) and puts the
 *   member's bytes in as an in-memory source, so `cut.load_audio()` decodes the WAV from the shard.
 * - The audio is the dataset's full-band master (`audio_fullband/`, the TTS engine's rate) when it has
 *   one, else the benchmark's 16 kHz file: Shar is for training, and training-oriented exports
 *   use the master. The WAV bytes go into the tar unchanged (PCM 16-bit, two channels).
 * - Supervisions, events (`custom.events`) and split (`custom.split`) are those of the lhotse export.
 * - Tar members are ustar entries with mode 0644, owner 0/0 and time 0 (as Python's `tarfile.TarInfo`
 *   defaults, which lhotse's writer leaves), so the same dataset gives the same bytes; a shard is
 *   streamed to the disk, one WAV in memory at a time.
 * - No `.idx` files: lhotse's indexed random access needs uncompressed `cuts.*.jsonl`; the streaming
 *   reader (the default for `.jsonl.gz` cuts) needs none.
 */
import tarStream from 'tar-stream';
import { readInputFile } from '../storage/read-input-file.ts';
import type { ExportDataset } from './export-dataset.ts';
import type { ExportWriter } from './export-writer.ts';
import { gzipJsonl, lhotseCut, lhotseDialogueManifests } from './lhotse.ts';
import { pythonJson } from './python-json.ts';

/** Dialogues per shard when none is given (lhotse's `SharWriter` default `shard_size`). */
export const DEFAULT_SHAR_SHARD_SIZE = 1000;

/** The folder of the export that holds the shards (lhotse's `in_dir`). */
export const SHAR_FOLDER = 'shar';

/** Options of the Shar export. */
export interface LhotseSharOptions {
  /** Dialogues per shard (default {@link DEFAULT_SHAR_SHARD_SIZE}). */
  shardSize?: number;
}

/** Time written into every tar member (the epoch, as Python's `TarInfo` default). */
const EPOCH = new Date(0);

/** Adds one file member to `pack` and resolves once it is in the stream (which waits while the disk is behind). */
function addMember(pack: tarStream.Pack, name: string, data: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry(
      { name, size: data.byteLength, mode: 0o644, uid: 0, gid: 0, uname: '', gname: '', mtime: EPOCH, type: 'file' },
      data,
      (error) => (error ? reject(error) : resolve()),
    );
  });
}

/**
 * Writes the Shar layout (module comment) into `writer`.
 * @throws RangeError for a shard size that is not a positive integer, or a WAV without two
 *   channels; WavDecodeError for an unreadable WAV; the writer's errors (a full disk names the shard)
 */
export async function writeLhotseSharExport(
  dataset: ExportDataset,
  writer: ExportWriter,
  options: LhotseSharOptions = {},
): Promise<Record<string, unknown>> {
  const shardSize = options.shardSize ?? DEFAULT_SHAR_SHARD_SIZE;
  if (!Number.isSafeInteger(shardSize) || shardSize < 1)
    throw new RangeError(`shard size ${shardSize}: a positive whole number of dialogues`);
  const sampleRates = new Set<number>();
  let fromFullBand = 0;
  const shards: string[] = [];
  for (let first = 0; first < dataset.dialogues.length; first += shardSize) {
    const number = String(shards.length).padStart(6, '0');
    const dialogues = dataset.dialogues.slice(first, first + shardSize);
    const cuts: string[] = [];
    const pack = tarStream.pack();
    // the side that fails first names the cause: a writer's error (a full disk, a stop) destroys the
    // pack, and the producer's error that follows it ("tar entry destroyed") is only its consequence.
    // The listener keeps a pack destroyed before the writer has begun reading it from throwing that
    // error as an uncaught 'error' event.
    let cause: { error: unknown } | undefined;
    pack.on('error', () => {});
    // a writer's error (a full disk) stops the producer, which waits while the disk is behind
    const writing = writer.writeChunks(`${SHAR_FOLDER}/recording.${number}.tar`, pack as AsyncIterable<Uint8Array>);
    const producing = (async () => {
      for (const dialogue of dialogues) {
        const audioFile = dialogue.fullBandAudioFile ?? dialogue.audioFile;
        if (dialogue.fullBandAudioFile !== null) fromFullBand += 1;
        const manifests = await lhotseDialogueManifests(dataset, dialogue, audioFile, '', 'shar');
        sampleRates.add(manifests.recording.sampling_rate as number);
        cuts.push(pythonJson(lhotseCut(dialogue, manifests)));
        await addMember(pack, `${dialogue.id}.wav`, await readInputFile(audioFile));
        await addMember(pack, `${dialogue.id}.json`, Buffer.from(`${pythonJson(manifests.recording)}\n`, 'utf8'));
      }
      pack.finalize();
    })();
    // a producer's error (a bad WAV) ends the writer's iteration, which removes its temporary file
    const [written, produced] = await Promise.allSettled([
      writing.catch((error: unknown) => {
        cause ??= { error };
        pack.destroy(error as Error);
        throw error;
      }),
      producing.catch((error: unknown) => {
        if (!pack.destroyed) cause ??= { error };
        pack.destroy(error as Error);
        throw error;
      }),
    ]);
    if (cause === undefined && written.status === 'rejected') cause = { error: written.reason };
    if (cause === undefined && produced.status === 'rejected') cause = { error: produced.reason };
    if (cause !== undefined) throw cause.error;
    await writer.write(`${SHAR_FOLDER}/cuts.${number}.jsonl.gz`, gzipJsonl(cuts));
    shards.push(number);
  }
  return {
    shards: shards.length,
    shardSize,
    cuts: dataset.dialogues.length,
    audio: {
      fullBandDialogues: fromFullBand,
      benchmarkAudioDialogues: dataset.dialogues.length - fromFullBand,
      sampleRates: [...sampleRates].sort((a, b) => a - b),
    },
    directory: SHAR_FOLDER,
    load: `CutSet.from_shar(in_dir=export folder/${SHAR_FOLDER})`,
  };
}
