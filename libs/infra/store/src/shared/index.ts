/**
 * The rules every store adapter keeps (commit checks, size limits, transcript pieces, page cursors),
 * pure and free of drivers so the in-memory store in @berth/testing shares them instead of copying.
 */
export { batchRange, checkVersionStep, gapError, isoRange } from './checks';
export { commitVerdict, prepareCommit, type PreparedCommit } from './commit';
export { recordJson, StoreLimits, utf8Bytes } from './limits';
export { checkLimit, decodeCursor, encodeCursor, orderOf, pageOf, type Order, type SortKey } from './paging';
export { planTranscriptAppend, type TranscriptPiece, type TranscriptPlan } from './transcripts';
