import { type BerthError, ConcurrencyError, ErrorCodes } from '@berth/core';
import { MongoBulkWriteError, MongoInvalidArgumentError, MongoNetworkError, MongoServerError, MongoServerSelectionError, MongoWriteConcernError } from 'mongodb';
import { UNIQUE_KEYS, Unique } from './collections';
import { asStoreError, isDuplicateOn } from './errors';

// Errors built with the driver's own classes, shaped as servers send them (E11000 with and without keyPattern).
const duplicate = (index: string, keyPattern?: Record<string, 1>) =>
  new MongoServerError({ code: 11000, errmsg: `E11000 duplicate key error collection: berth.journal index: ${index} dup key: { session_id: "s", seq: 2 }`, ...(keyPattern ? { keyPattern, keyValue: {} } : {}) });
const bulkDuplicate = (...errors: { index: string; keyPattern?: Record<string, 1> }[]) =>
  new MongoBulkWriteError(
    {
      message: 'E11000',
      code: 11000,
      writeErrors: errors.map((e, i) => ({ code: 11000, index: i, errmsg: `E11000 duplicate key error collection: berth.x index: ${e.index} dup key: { }`, err: { code: 11000, index: i, keyPattern: e.keyPattern, op: {} } })) as never,
    },
    {} as never,
  );

describe('isDuplicateOn', () => {
  it('names the index by the key pattern when the server sends one', () => {
    expect(isDuplicateOn(duplicate('whatever', { session_id: 1, seq: 1 }), Unique.position.name, UNIQUE_KEYS)).toBe(true);
    expect(isDuplicateOn(duplicate('whatever', { _id: 1 }), '_id_')).toBe(true);
    expect(isDuplicateOn(duplicate('whatever', { _id: 1 }), Unique.position.name, UNIQUE_KEYS)).toBe(false);
  });

  it('falls back to the index name in the message', () => {
    expect(isDuplicateOn(duplicate('session_seq'), Unique.position.name, UNIQUE_KEYS)).toBe(true);
    expect(isDuplicateOn(duplicate('prefix'), Unique.position.name, UNIQUE_KEYS)).toBe(false);
    expect(isDuplicateOn(duplicate('_id_'), '_id_')).toBe(true);
  });

  it('holds for a bulk write only when every failed write is a duplicate on that index', () => {
    expect(isDuplicateOn(bulkDuplicate({ index: 'x', keyPattern: { session_id: 1, path: 1, offset: 1 } }), Unique.transcriptPiece.name, UNIQUE_KEYS)).toBe(true);
    expect(isDuplicateOn(bulkDuplicate({ index: 'session_seq' }, { index: '_id_' }), Unique.position.name, UNIQUE_KEYS)).toBe(false);
  });

  it('is false for anything that is not a duplicate key', () => {
    expect(isDuplicateOn(new MongoServerError({ code: 121, errmsg: 'Document failed validation' }), '_id_')).toBe(false);
    expect(isDuplicateOn(new Error('E11000 duplicate key error index: _id_ dup key'), '_id_')).toBe(false);
  });
});

describe('asStoreError', () => {
  const code = (e: unknown) => (asStoreError(e) as BerthError).code;

  it('makes an unreachable, stepping-down or slow server a retryable 503', () => {
    expect(code(new MongoServerSelectionError('Server selection timed out after 10000 ms', {} as never))).toBe(ErrorCodes.UNAVAILABLE);
    expect(code(new MongoNetworkError('connection reset'))).toBe(ErrorCodes.UNAVAILABLE);
    expect(code(new MongoServerError({ code: 10107, errmsg: 'not primary' }))).toBe(ErrorCodes.UNAVAILABLE);
    expect(code(new MongoServerError({ code: 11602, errmsg: 'InterruptedDueToReplStateChange' }))).toBe(ErrorCodes.UNAVAILABLE);
    expect(code(new MongoServerError({ code: 112, errmsg: 'WriteConflict', errorLabels: ['TransientTransactionError'] }))).toBe(ErrorCodes.UNAVAILABLE);
  });

  it('marks a write whose outcome is unknown (write-concern timeout, unknown commit result)', () => {
    const wtimeout = new MongoWriteConcernError({ writeConcernError: { code: 64, errmsg: 'waiting for replication timed out' }, ok: 1 } as never);
    expect(asStoreError(wtimeout)).toMatchObject({ code: ErrorCodes.UNAVAILABLE, status: 503, details: { outcome_unknown: true } });
    const unknownCommit = new MongoServerError({ code: 50, errmsg: 'operation exceeded time limit', errorLabels: ['UnknownTransactionCommitResult'] });
    expect(asStoreError(unknownCommit)).toMatchObject({ code: ErrorCodes.UNAVAILABLE, details: { outcome_unknown: true } });
  });

  it('makes a document over the server limit a 413', () => {
    expect(code(new MongoInvalidArgumentError('Document is larger than the maximum size 16777216'))).toBe(ErrorCodes.PAYLOAD_TOO_LARGE);
    expect(code(new MongoServerError({ code: 10334, errmsg: 'BSONObj size: 17000000 is invalid' }))).toBe(ErrorCodes.PAYLOAD_TOO_LARGE);
  });

  it('leaves coded errors and unexpected failures as they are', () => {
    const conflict = new ConcurrencyError('taken');
    expect(asStoreError(conflict)).toBe(conflict);
    const validation = new MongoServerError({ code: 121, errmsg: 'Document failed validation' });
    expect(asStoreError(validation)).toBe(validation);
    const duplicateOnUnknownIndex = duplicate('operator_added_index');
    expect(asStoreError(duplicateOnUnknownIndex)).toBe(duplicateOnUnknownIndex);
  });
});
