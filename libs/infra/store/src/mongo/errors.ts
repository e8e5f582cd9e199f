import { MongoBulkWriteError, MongoServerError } from 'mongodb';

const DUPLICATE_KEY = 11000;

/** True when the write failed only because of duplicate keys (every write error is an 11000). */
export function isDuplicateKey(e: unknown): boolean {
  if (e instanceof MongoBulkWriteError) {
    const errors = Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors];
    return errors.length > 0 && errors.every((w) => w.code === DUPLICATE_KEY);
  }
  return e instanceof MongoServerError && e.code === DUPLICATE_KEY;
}
