/**
 * Redis going away during a queued build, as the coordinator's watcher (./queue-watcher.ts) says it:
 * one line when it goes, one when it is back, and a stop when it stays away too long.
 */
import type { Redis } from 'ioredis';
import { BuildStoppedError } from '../model/build-errors.ts';
import { firstLine } from '../run/stage-runner.ts';
import type { BuildLog } from './build-context.ts';

/** Redis stayed away too long: the build stopped before writing anything (exit code 4). */
export class QueueLostError extends BuildStoppedError {
  override name = 'QueueLostError';
}

/** What a {@link RedisOutage} watches and whom it tells. */
export interface RedisOutageOptions {
  client: Redis;
  log: BuildLog;
  /** The Redis URL as log lines name it. */
  described: string;
  /** How long Redis may be away before `giveUp` is called (seconds; undefined: 300). */
  giveUpSeconds: number | undefined;
  /** Redis answers again (after the "is back" line). */
  back: () => void;
  /** Redis stayed away `giveUpSeconds`: called once, with the error that stops the build. */
  giveUp: (error: QueueLostError) => void;
}

/**
 * Whether Redis is away. It goes away when the client's connection closes or errs, or when a caller
 * says so (`markDown`: no answer in time); then it is probed with one PING at a time (ioredis holds
 * it until it is connected again) every second, and it is back when that PING is answered or the
 * client is ready again. Sends nothing while Redis is there.
 */
export class RedisOutage {
  /** When Redis went away (ms since the epoch), or null while it is there. */
  private since: number | null = null;
  private probing = false;
  private probeTimer: NodeJS.Timeout | null = null;
  private ended = false;
  private readonly onClose = () => this.markDown('connection closed');
  private readonly onError = (error: Error) => this.markDown(error);
  private readonly onReady = () => this.markUp();

  constructor(private readonly options: RedisOutageOptions) {
    options.client.on('close', this.onClose);
    options.client.on('error', this.onError);
    options.client.on('ready', this.onReady);
  }

  get down(): boolean {
    return this.since !== null;
  }

  /** Redis went away (`error` says how, in the line): said once, until it is back. */
  markDown(error: unknown): void {
    if (this.ended || this.since !== null) return;
    const { log, described, giveUpSeconds, client } = this.options;
    const giveUpMilliseconds = (giveUpSeconds ?? 300) * 1000;
    const since = Date.now();
    this.since = since;
    log(
      `queue: lost Redis at ${described} (${firstLine(error)}); waiting up to ${Math.round(giveUpMilliseconds / 1000)} s for it`,
    );
    this.probeTimer = setInterval(() => {
      if (Date.now() - since >= giveUpMilliseconds) {
        const error = new QueueLostError(
          `queue: Redis at ${described} gone for ${Math.round(giveUpMilliseconds / 1000)} s; nothing was written; start it again and rerun the build to continue`,
        );
        this.end();
        this.options.giveUp(error);
        return;
      }
      if (this.probing) return;
      this.probing = true;
      client.ping().then(
        () => ((this.probing = false), this.markUp()),
        () => (this.probing = false),
      );
    }, 1000);
  }

  private markUp(): void {
    if (this.ended || this.since === null) return;
    this.since = null;
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
    this.options.log(`queue: Redis at ${this.options.described} is back; going on`);
    this.options.back();
  }

  /** Stop watching: no more lines, probes or calls. */
  end(): void {
    this.ended = true;
    if (this.probeTimer) clearInterval(this.probeTimer);
    this.probeTimer = null;
    const { client } = this.options;
    client.off('close', this.onClose);
    client.off('error', this.onError);
    client.off('ready', this.onReady);
  }
}
