import { isMongoUnavailable } from './mongo/errors';

/** SQLite result codes that mean "not now" (locked, disk full, I/O trouble), not "this write is wrong". */
const SQLITE_UNAVAILABLE = /^SQLITE_(BUSY|LOCKED|FULL|IOERR|CANTOPEN|READONLY)/;

/**
 * A raw store failure that says the store cannot take the request right now (an SQLite lock held
 * too long, a full disk, an I/O error; MongoDB unreachable or not primary), so the caller should
 * answer "retry later" rather than an internal error. (The MongoDB adapter already hands these out
 * as coded UNAVAILABLE errors; this also covers a driver error met before that mapping.)
 */
export function isStoreUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SQLITE_UNAVAILABLE.test(code)) return true;
  return isMongoUnavailable(error);
}
