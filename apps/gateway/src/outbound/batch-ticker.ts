import type { Logger } from '@berth/ports';

export type BatchTickerOptions = Readonly<{
  /** Works through one batch; returns how many it took (`batchSize`: a full batch, more may be due). */
  tick: () => Promise<number>;
  batchSize: number;
  /** After the batches of a round (say, pruning a log). */
  afterRound?: () => Promise<void>;
  log: Logger;
  /** Names the work in the warning a failed round logs. */
  what: string;
}>;

/**
 * A worker's clock: a round every `intervalMs`, its batches back to back while they come back
 * full; a failed round is logged and the next comes on time. `stop` waits for the round in flight.
 */
export class BatchTicker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly o: BatchTickerOptions) {}

  start(intervalMs: number): void {
    const round = async () => {
      try {
        while ((await this.o.tick()) === this.o.batchSize && this.timer) {
          // a full batch: more may be due
        }
        await this.o.afterRound?.();
      } catch (e) {
        this.o.log.warn(`${this.o.what} failed; retrying on the next round`, { err: e });
      }
      if (this.timer) this.timer = setTimeout(() => (this.running = round()), intervalMs);
    };
    this.timer = setTimeout(() => (this.running = round()), 0);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }
}
