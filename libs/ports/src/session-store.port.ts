import type { EventType, RecordedEvent } from '@berth/contracts';
import type { SessionRecord } from './read-models.port';

/**
 * The session journal: the kernel's durable state and the only source of truth for a session's
 * position (its last seq). Snapshots and read-model rows are derived from it and written in the
 * same atomic commit; the outbox holds the committed events not yet published.
 */
export interface SessionJournal {
  /**
   * Commits one command, all or nothing: its events, the snapshot folded up to its last event, its
   * read-model row and its outbox entries. Each adapter owns the atomicity (one SQLite transaction,
   * one MongoDB multi-document transaction).
   *
   * The events are the conflict point: they must start at the session's last seq + 1 with
   * consecutive seqs. A seq already taken by other events is a `ConcurrencyError` (from
   * @berth/core) and nothing of the commit is written; a gap is a `ValidationError`. The same events
   * already committed at those seqs (a retry after an unknown outcome) resolve without writing
   * anything again. A payload a store cannot hold is a `PAYLOAD_TOO_LARGE` error, nothing written,
   * except the snapshot: a snapshot too large to store is left out and the stored one lags (it is a
   * cache; the journal tail catches it up).
   */
  commit(commit: CommandCommit): Promise<void>;
  readEvents(sessionId: string, query?: JournalQuery): Promise<RecordedEvent[]>;
  /** 0 when the session has no events. */
  lastSeq(sessionId: string): Promise<number>;
  /** Events a command already committed (redelivery detection). */
  eventsOfCommand(sessionId: string, commandId: string): Promise<RecordedEvent[]>;
  /**
   * The outbox: committed events not yet marked published, oldest commit first, each session's in
   * seq order, one page after `after` (a cursor from a previous page; null for the first).
   */
  unpublished(query: OutboxQuery): Promise<OutboxPage>;
  /**
   * One session's committed events below `seq` not yet marked published, in seq order: what must
   * reach the broker before event `seq` does (another replica's publish may have failed).
   */
  unpublishedBefore(sessionId: string, seq: number): Promise<RecordedEvent[]>;
  /**
   * Marks events published, for any number of sessions in one write. Idempotent. An adapter that
   * tracks whole commits keeps a commit in its outbox until all of its events are marked (they come
   * back from `unpublished` and the broker drops the repeats).
   */
  markPublished(marks: readonly PublishedMark[]): Promise<void>;
}

/** Everything one command writes. `snapshot.version` and `record.last_seq` must be the last event's seq. */
export type CommandCommit = Readonly<{
  sessionId: string;
  events: readonly RecordedEvent[];
  snapshot?: SessionSnapshot;
  record?: SessionRecord;
}>;

export type PublishedMark = Readonly<{ sessionId: string; seqs: readonly number[] }>;

export type OutboxQuery = Readonly<{ limit: number; after?: string | null }>;

/** `next` continues after this page; null when the outbox held nothing more at the time of the read. */
export type OutboxPage = Readonly<{ events: readonly RecordedEvent[]; next: string | null }>;

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

/**
 * Snapshots are written only by `SessionJournal.commit`. One may lag the journal (the tail catches it
 * up); one ahead of it (a store restored from an inconsistent copy) is ignored by the kernel.
 */
export interface SessionSnapshots {
  load(sessionId: string): Promise<SessionSnapshot | null>;
}
