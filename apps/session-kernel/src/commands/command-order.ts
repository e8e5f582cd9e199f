import { Streams, Subjects } from '@berth/contracts';
import type { Logger } from '@berth/ports';

/** Finds the stream sequence of a session's oldest command still on SESSION_CMD (null: none). */
export type OldestCommand = (subject: string) => Promise<number | null>;

const FIRST_WAIT_MS = 5;
const LONGEST_WAIT_MS = 100;

/**
 * One session's commands in stream order, whichever kernel replica each was delivered to. The
 * kernels share one durable consumer on a work-queue stream, so two commands of a session can be
 * in flight in two processes at once, and the second could commit first (a later output batch
 * before an earlier one, a turn completed before its last output). SESSION_CMD deletes a command
 * once it is acked, so the session's oldest stored command is the one to apply next: a delivery
 * waits, outside the session lock, until it is that one, extending its own ack deadline every
 * `workingEveryMs`. A wait is bounded (`maxWaitMs`, longer than the ack wait, so the command a
 * dead replica held is redelivered and applied first): an older command that is itself waiting out
 * a long retry delay must not hold the session forever, so past the bound the delivery goes ahead,
 * logged.
 */
export class CommandOrder {
  constructor(
    private readonly deps: Readonly<{ oldest: OldestCommand; maxWaitMs: number; workingEveryMs: number; log: Logger }>,
  ) {}

  async awaitTurn(sessionId: string, streamSeq: number, working: () => void): Promise<void> {
    const subject = Subjects.sessionCommands(sessionId);
    const started = Date.now();
    let lastWorking = started;
    for (let wait = FIRST_WAIT_MS; ; wait = Math.min(LONGEST_WAIT_MS, wait * 2)) {
      const oldest = await this.deps.oldest(subject);
      if (oldest === null || oldest >= streamSeq) return;
      const now = Date.now();
      if (now - started >= this.deps.maxWaitMs) {
        this.deps.log.warn(`${Streams.commands}: an older command of the session is still pending; applying this one anyway`, { session_id: sessionId, stream_seq: streamSeq, oldest_seq: oldest, waited_ms: now - started });
        return;
      }
      if (now - lastWorking >= this.deps.workingEveryMs) {
        working();
        lastWorking = now;
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}
