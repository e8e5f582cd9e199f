import { MongoErrorLabel, MongoServerError, type ClientSession, type TransactionOptions } from 'mongodb';
import { hasLabel } from './errors';

/** What a transaction needs of a client (a fake in the unit test). */
export type SessionSource = Readonly<{ startSession(): ClientSession }>;

export type TransactionSettings = Readonly<{
  /** No new attempt starts after this long (the driver's withTransaction has a fixed 120 s in 7.x: its timeoutMS is ignored). */
  deadlineMs: number;
  /** Server-side limit of one commitTransaction. */
  maxCommitTimeMS: number;
  /** Errors of our own that also mean "run the whole transaction again" (besides TransientTransactionError). */
  retryOn?: (error: unknown) => boolean;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}>;

const MAX_TIME_MS_EXPIRED = 50;
const isMaxTimeMSExpired = (e: unknown): boolean =>
  e instanceof MongoServerError && (e.code === MAX_TIME_MS_EXPIRED || (e.writeConcernError as { code?: unknown } | undefined)?.code === MAX_TIME_MS_EXPIRED);

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `work` in one multi-document transaction and commits it, retried the way the driver's
 * `withTransaction` documents it (transactions spec): the whole transaction again on a
 * `TransientTransactionError` (with the driver's jittered backoff: 5 ms × 1.5ⁿ, at most 500 ms),
 * the commit alone again on an `UnknownTransactionCommitResult` (the server remembers the
 * transaction, so a repeated commit cannot apply it twice) unless the commit hit its own
 * `maxCommitTimeMS`. Unlike `withTransaction`, attempts stop at `deadlineMs`, so a kernel holding
 * a session's lock never waits longer than configured. Reads in it see one snapshot of the primary.
 */
export async function inTransaction<T>(client: SessionSource, work: (session: ClientSession) => Promise<T>, settings: TransactionSettings): Promise<T> {
  const now = settings.now ?? Date.now;
  const sleep = settings.sleep ?? defaultSleep;
  const deadline = now() + settings.deadlineMs;
  const options: TransactionOptions = { readConcern: { level: 'snapshot' }, readPreference: 'primary', maxCommitTimeMS: settings.maxCommitTimeMS };
  const session = client.startSession();
  try {
    for (let attempt = 0; ; attempt++) {
      if (attempt > 0) await sleep(Math.random() * Math.min(5 * 1.5 ** attempt, 500));
      session.startTransaction(options);
      let result: T;
      try {
        result = await work(session);
      } catch (error) {
        if (session.inTransaction()) await session.abortTransaction().catch(() => undefined);
        if ((hasLabel(error, MongoErrorLabel.TransientTransactionError) || settings.retryOn?.(error)) && now() < deadline) continue;
        throw error;
      }
      const committed = await commit(session, deadline, now);
      if (committed === 'retry-transaction') continue;
      return result;
    }
  } finally {
    await session.endSession().catch(() => undefined);
  }
}

async function commit(session: ClientSession, deadline: number, now: () => number): Promise<'committed' | 'retry-transaction'> {
  for (;;) {
    try {
      await session.commitTransaction();
      return 'committed';
    } catch (error) {
      if (hasLabel(error, MongoErrorLabel.UnknownTransactionCommitResult) && !isMaxTimeMSExpired(error) && now() < deadline) continue;
      if (hasLabel(error, MongoErrorLabel.TransientTransactionError) && now() < deadline) return 'retry-transaction';
      throw error;
    }
  }
}
