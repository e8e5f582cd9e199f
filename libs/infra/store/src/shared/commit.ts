import { ConcurrencyError, ValidationError } from '@berth/core';
import type { RecordedEvent } from '@berth/contracts';
import type { CommandCommit, SessionRecord } from '@berth/ports';
import { batchRange, gapError } from './checks';
import { recordJson, StoreLimits, utf8Bytes } from './limits';

/** A commit checked and encoded before any write, so a store fails it before touching anything. */
export type PreparedCommit = Readonly<{
  sessionId: string;
  from: number;
  to: number;
  events: readonly Readonly<{ event: RecordedEvent; body: string }>[];
  /** Null when the commit has none, or when it is too large to store (it is a cache: the stored one lags). */
  snapshot: Readonly<{ version: number; state: string; updatedAt: string }> | null;
  record: Readonly<{ record: SessionRecord; json: string }> | null;
}>;

export function prepareCommit(commit: CommandCommit): PreparedCommit {
  const range = batchRange(commit.sessionId, commit.events);
  if (!range) throw new ValidationError(`session ${commit.sessionId}: a commit holds at least one event`, 'events');
  const events = commit.events.map((event) => ({ event, body: recordJson(`event ${event.session_id}:${event.seq}`, event) }));
  let snapshot: PreparedCommit['snapshot'] = null;
  if (commit.snapshot) {
    if (commit.snapshot.sessionId !== commit.sessionId || commit.snapshot.version !== range.to) {
      throw new ValidationError(`session ${commit.sessionId}: the commit's snapshot must be folded up to seq ${range.to}`, 'snapshot.version');
    }
    const state = JSON.stringify(commit.snapshot.state);
    if (utf8Bytes(state) <= StoreLimits.recordBytes) snapshot = { version: range.to, state, updatedAt: commit.snapshot.updatedAt };
  }
  let record: PreparedCommit['record'] = null;
  if (commit.record) {
    if (commit.record.id !== commit.sessionId || commit.record.last_seq !== range.to) {
      throw new ValidationError(`session ${commit.sessionId}: the commit's read-model row must be at seq ${range.to}`, 'record.last_seq');
    }
    record = { record: commit.record, json: recordJson(`session ${commit.sessionId}'s read-model row`, commit.record) };
  }
  return { sessionId: commit.sessionId, ...range, events, snapshot, record };
}

/**
 * Where the journal stands decides a commit: the next seq commits; this commit's first event
 * already at `from` (event ids are derived from the command id and the event's index) means an
 * earlier attempt committed it and its outcome was lost; any other event there is a lost race; a
 * seq past the end is a gap.
 */
export function commitVerdict(commit: PreparedCommit, lastSeq: number, eventIdAtFrom: string | null): 'write' | 'already-committed' {
  if (commit.from === lastSeq + 1) return 'write';
  if (commit.from > lastSeq + 1) throw gapError(commit.sessionId, commit.from, lastSeq);
  if (eventIdAtFrom !== null && eventIdAtFrom === commit.events[0]?.event.id) return 'already-committed';
  throw new ConcurrencyError(`session ${commit.sessionId}: seq ${commit.from} is already taken (last seq ${lastSeq})`);
}
