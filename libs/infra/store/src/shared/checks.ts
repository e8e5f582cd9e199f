import { isSafeToken, parseIsoUtc, ValidationError } from '@berth/core';
import type { RecordedEvent } from '@berth/contracts';

/**
 * Validates an append batch: every event belongs to the session and seqs are consecutive.
 * Returns the first and last seq, or null for an empty batch (nothing to do).
 */
export function batchRange(sessionId: string, events: readonly RecordedEvent[]): { from: number; to: number } | null {
  const first = events[0];
  if (first === undefined) return null;
  events.forEach((event, i) => {
    if (event.session_id !== sessionId) {
      throw new ValidationError(`event ${i} belongs to session ${event.session_id}, not ${sessionId}`, `events.${i}.session_id`);
    }
    if (!Number.isInteger(event.seq) || event.seq !== first.seq + i || event.seq < 1) {
      throw new ValidationError(`event seqs must be consecutive from ${first.seq}; event ${i} has seq ${event.seq}`, `events.${i}.seq`);
    }
  });
  return { from: first.seq, to: first.seq + events.length - 1 };
}

export const gapError = (sessionId: string, from: number, lastSeq: number): ValidationError =>
  new ValidationError(`session ${sessionId}: seq ${from} does not follow the last seq ${lastSeq}`, 'seq');

export type TimeRange = Readonly<{ gt?: string; gte?: string; lt?: string; lte?: string }>;

/** Normalises a created_at filter to canonical ISO strings, which compare correctly as text. */
export function isoRange(range: TimeRange | undefined): TimeRange {
  if (!range) return {};
  const out: Record<string, string> = {};
  for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
    const value = range[op];
    if (value === undefined) continue;
    const date = parseIsoUtc(value);
    if (!date) throw new ValidationError(`created_at[${op}] must be an ISO-8601 timestamp`, `created_at[${op}]`);
    out[op] = date.toISOString();
  }
  return out;
}

/** A new agent version must be exactly one past the version the writer saw. */
export function checkVersionStep(agent: Readonly<{ id: string; version: number }>, expectedVersion: number): void {
  if (!Number.isInteger(expectedVersion) || expectedVersion < 0 || agent.version !== expectedVersion + 1) {
    throw new ValidationError(`agent ${agent.id}: version ${agent.version} does not follow expected version ${expectedVersion}`, 'version');
  }
}

/** The `ids` filter of a file list: at most 100 after de-duplication. */
export function checkIds(ids: readonly string[]): string[] {
  const unique = [...new Set(ids)];
  if (unique.length > 100) throw new ValidationError('ids takes at most 100 entries', 'ids');
  return unique;
}

/** Blob keys become file names and GridFS ids: safe tokens only. */
export function checkBlobKey(key: string): string {
  if (!isSafeToken(key)) throw new ValidationError("blob key must be 1-128 letters, digits, '_' or '-'", 'key');
  return key;
}
