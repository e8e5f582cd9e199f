import type { EventType, RecordedEvent } from '@berth/contracts';
import type { SessionRecord } from './read-models.port';

/**
 * The session journal and snapshots: the kernel's durable state. The journal is the truth; a
 * snapshot is a cache that may lag and is caught up from the journal tail.
 *
 * Commit point: `appendEvents` inserts rows keyed (session_id, seq). A seq already taken means
 * another writer won the race → `ConcurrencyError` (from @berth/core), never a partial append.
 * Appended events start unpublished (the outbox); the relay publishes them and marks them.
 */
export interface SessionJournal {
  appendEvents(sessionId: string, events: readonly RecordedEvent[]): Promise<void>;
  readEvents(sessionId: string, query?: JournalQuery): Promise<RecordedEvent[]>;
  /** 0 when the session has no events. */
  lastSeq(sessionId: string): Promise<number>;
  /** Events a command already appended (redelivery detection). */
  eventsOfCommand(sessionId: string, commandId: string): Promise<RecordedEvent[]>;
  /** The outbox: committed events not yet acknowledged by the broker, oldest first. */
  unpublished(limit: number): Promise<RecordedEvent[]>;
  markPublished(sessionId: string, seqs: readonly number[]): Promise<void>;
  /**
   * Optional, for stores with multi-table transactions: appends the command's events and writes
   * its snapshot and read-model row in ONE transaction. The append is the conflict point exactly
   * as in `appendEvents` (`ConcurrencyError`, and then nothing of the commit is written); a stale
   * `snapshot.expectedVersion` or an older `record.last_seq` just leaves that row as it is.
   * Stores without it get `appendEvents` + `snapshots.save` + `sessions.upsert` in sequence.
   */
  commitCommand?(commit: CommandCommit): Promise<void>;
  /** Optional: `markPublished` for several sessions in one write. */
  markPublishedMany?(marks: readonly PublishedMark[]): Promise<void>;
}

/** Everything one command writes. */
export type CommandCommit = Readonly<{
  sessionId: string;
  events: readonly RecordedEvent[];
  snapshot?: Readonly<{ snapshot: SessionSnapshot; expectedVersion: number }>;
  record?: SessionRecord;
}>;

export type PublishedMark = Readonly<{ sessionId: string; seqs: readonly number[] }>;

export type JournalQuery = {
  /** Only events with seq > afterSeq (asc) or seq < beforeSeq (desc). */
  afterSeq?: number;
  beforeSeq?: number;
  limit?: number;
  order?: 'asc' | 'desc';
  types?: readonly EventType[];
};

export type SessionSnapshot = Readonly<{
  sessionId: string;
  /** The journal seq the state is folded up to. */
  version: number;
  state: unknown;
  updatedAt: string;
}>;

export interface SessionSnapshots {
  load(sessionId: string): Promise<SessionSnapshot | null>;
  /**
   * Saves when the stored version is `expectedVersion` (0 = none stored yet). Returns false when
   * another writer moved it; a lagging snapshot is harmless, so callers may ignore false.
   */
  save(snapshot: SessionSnapshot, expectedVersion: number): Promise<boolean>;
}
