import { BerthError, ErrorCodes, isBerthError } from '@berth/core';
import { MongoBulkWriteError, MongoError, MongoErrorLabel, MongoInvalidArgumentError, MongoNetworkError, MongoServerError, MongoServerSelectionError, MongoWriteConcernError } from 'mongodb';

const DUPLICATE_KEY = 11000;

/** Server codes (mongodb's MONGODB_ERROR_CODES) that mean "not now, this node or this moment": retry. */
const UNAVAILABLE_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  50, // MaxTimeMSExpired
  64, // WriteConcernTimeout (WriteConcernFailed before 8.1): the write may have happened
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  262, // ExceededTimeLimit
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);
const BSON_OBJECT_TOO_LARGE = 10334;

/** The write errors of a failed write: one for a single write, each for a bulk one. */
function writeErrorsOf(e: unknown): { code: unknown; keyPattern?: unknown; errmsg?: unknown }[] {
  if (e instanceof MongoBulkWriteError) {
    const errors = Array.isArray(e.writeErrors) ? e.writeErrors : [e.writeErrors];
    return errors.map((w) => ({ code: w.code, keyPattern: (w.err as { keyPattern?: unknown }).keyPattern, errmsg: w.errmsg }));
  }
  if (e instanceof MongoServerError) return [{ code: e.code, keyPattern: e.keyPattern, errmsg: e.errmsg ?? e.message }];
  return [];
}

/**
 * The unique index a duplicate-key error is about, by the server's `keyPattern` (compared with the
 * index keys we declared) or, from servers that do not send it, the `index: <name>` of its message.
 */
function duplicateOf(error: { keyPattern?: unknown; errmsg?: unknown }, indexes: Readonly<Record<string, Readonly<Record<string, unknown>>>>): string | null {
  if (typeof error.keyPattern === 'object' && error.keyPattern !== null) {
    const fields = Object.keys(error.keyPattern).join(',');
    if (fields === '_id') return '_id_';
    for (const [name, key] of Object.entries(indexes)) if (Object.keys(key).join(',') === fields) return name;
    return null;
  }
  const named = /index: (\S+) dup key/.exec(typeof error.errmsg === 'string' ? error.errmsg : '');
  return named?.[1] ?? null;
}

/**
 * True when the write failed only because of duplicate keys, and every one of them is on `index`
 * (`_id_` for the primary key). A duplicate on any other unique index is another failure and must
 * not be mistaken for this one (e.g. "already inserted").
 */
export function isDuplicateOn(e: unknown, index: string, indexes: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {}): boolean {
  const errors = writeErrorsOf(e);
  return errors.length > 0 && errors.every((w) => w.code === DUPLICATE_KEY && duplicateOf(w, indexes) === index);
}

export const hasLabel = (e: unknown, label: MongoErrorLabel): boolean => e instanceof MongoError && e.hasErrorLabel(label);

/** The server or the network is not there, not primary, or did not confirm in time: worth retrying. */
export function isMongoUnavailable(e: unknown): boolean {
  if (!(e instanceof Error)) return false;
  return (
    e instanceof MongoServerSelectionError ||
    e instanceof MongoNetworkError ||
    e.name === 'MongoWaitQueueTimeoutError' ||
    (e instanceof MongoServerError && typeof e.code === 'number' && UNAVAILABLE_CODES.has(e.code)) ||
    isOutcomeUnknown(e) ||
    hasLabel(e, MongoErrorLabel.RetryableWriteError) ||
    hasLabel(e, MongoErrorLabel.TransientTransactionError)
  );
}

/** The write may have been applied (a write-concern timeout, an unknown commit result). */
const isOutcomeUnknown = (e: unknown): boolean => e instanceof MongoWriteConcernError || hasLabel(e, MongoErrorLabel.UnknownTransactionCommitResult);

/**
 * A driver error as the rest of Berth understands it: a coded 503 (retry) when the server or the
 * network is not there, not primary, or did not confirm the write in time (`outcome_unknown` when
 * the write may still have been applied); a 413 for a document over the server's limit. Anything
 * else is returned as it is: a bug to see, not to paper over.
 */
export function asStoreError(e: unknown): unknown {
  if (isBerthError(e) || !(e instanceof Error)) return e;
  if (e instanceof MongoInvalidArgumentError && /larger than the maximum size/.test(e.message)) return tooLarge(e.message);
  if (e instanceof MongoServerError && e.code === BSON_OBJECT_TOO_LARGE) return tooLarge(e.message);
  if (!isMongoUnavailable(e)) return e;
  return new BerthError(ErrorCodes.UNAVAILABLE, 503, `MongoDB did not complete the operation (${e.name}: ${e.message}); retry`, isOutcomeUnknown(e) ? { outcome_unknown: true } : {});
}

const tooLarge = (message: string): BerthError => new BerthError(ErrorCodes.PAYLOAD_TOO_LARGE, 413, `MongoDB refused a document as too large: ${message}`);
