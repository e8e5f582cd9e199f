import { MongoNetworkError, MongoServerSelectionError } from 'mongodb';

/** SQLite result codes that mean "not now" (locked, disk full, I/O trouble), not "this write is wrong". */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY)/;

/**
 * A store failure that says the store cannot take the request right now (an SQLite lock held too
 * long, a full disk, an I/O error; MongoDB unreachable), so the caller should answer "retry later"
 * rather than an internal error. Knowledge of each adapter's errors stays here.
 */
export function isStoreUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SQLITE_UNAVAILABLE.test(code)) return true;
  return error instanceof MongoNetworkError || error instanceof MongoServerSelectionError;
}
