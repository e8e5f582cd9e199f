import type { TranscriptLocation } from '@berth/harness';
import type { Logger } from '@berth/ports';
import type { TranscriptSync } from './transcript-sync';

export type MirrorLoopOptions = Readonly<{
  sync: TranscriptSync;
  sandboxId: string;
  sessionId: string;
  /** Where the harness keeps this conversation's transcript; null until the harness said which conversation it is. */
  locations: () => readonly TranscriptLocation[] | null;
  everyMs: number;
  /** The turn's logger. */
  log: Logger;
}>;

/**
 * Mirrors one turn's harness transcript into the store while the turn runs: every `everyMs`,
 * output or not (a long silent tool step must not leave it unmirrored), never two at once (a tick
 * while one runs is skipped), and on demand (a terminal line, the exit). A turn waiting for a
 * tool confirmation writes nothing new: the loop pauses (64 waiting turns would otherwise exec
 * into 64 sandboxes every second for nothing).
 */
export class TranscriptMirrorLoop {
  private timer: NodeJS.Timeout | null = null;
  private chain: Promise<void> = Promise.resolve();
  private inFlight = false;
  private paused = false;

  constructor(private readonly options: MirrorLoopOptions) {}

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      if (this.inFlight || this.paused) return;
      this.inFlight = true;
      void this.mirror().finally(() => (this.inFlight = false));
    }, this.options.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
  }

  /**
   * Appends what the transcript gained (serialised; a failure is logged and the next mirror catches
   * up). `quick` reuses the file list of the last full mirror (one round trip less at a turn's end).
   */
  mirror(options: Readonly<{ final?: boolean; quick?: boolean }> = {}): Promise<void> {
    const locations = this.options.locations();
    if (locations === null) return this.chain;
    const { sync, sandboxId, sessionId, log } = this.options;
    this.chain = this.chain.then(async () => {
      try {
        await sync.mirrorOut(sandboxId, sessionId, locations, options.quick ?? false);
      } catch (error) {
        log.warn(`transcript mirror${options.final ? ' at turn end' : ''} failed`, { err: error });
      }
    });
    return this.chain;
  }
}
