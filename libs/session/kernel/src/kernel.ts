import { ErrorCodes, isBerthError, type Clock } from '@berth/core';
import { EVENT_SCHEMA_VERSIONS, eventIdFor, type CommandOutcome, type RecordedEvent, type SessionCommand, type SessionEvent } from '@berth/contracts';
import type { SessionJournal, SessionReadModel, SessionSnapshots } from '@berth/ports';
import { decide, evolve, initialState, type SessionState } from '@berth/session-domain';
import { projectSessionRecord } from './session-record';
import { envelope, snapshotSession } from './snapshot-envelope';

export type SessionKernelDeps = Readonly<{
  journal: SessionJournal;
  snapshots: SessionSnapshots;
  sessions: SessionReadModel;
  clock: Clock;
  /** How many times a lost append race is retried with fresh state before giving up. Default 5. */
  maxConflictRetries?: number;
  /** Told about best-effort work that failed without failing the command (snapshot reads and writes). */
  onBestEffortFailure?: (what: 'snapshot.load' | 'snapshot.save', sessionId: string, error: unknown) => void;
  /** How many sessions' latest state is kept in memory between commands. Default 1,000; 0 disables it. */
  cachedSessions?: number;
  /** Told how long each decide and each commit took (metrics). */
  observer?: KernelObserver;
}>;

/** Durations in seconds, measured around the pure decide and around the store commit. */
export type KernelObserver = Readonly<{ decided(seconds: number): void; committed(seconds: number): void }>;

/** A session's state as the kernel sees it: folded up to `lastSeq`. */
export type LoadedSession = Readonly<{ state: SessionState; lastSeq: number }>;

/**
 * An outcome plus the events this call committed (none for a duplicate, a refusal or a no-op), and
 * the session's owner (their event subjects carry it; '' for a session that does not exist).
 */
export type ExecutedCommand = Readonly<{ outcome: CommandOutcome; events: readonly RecordedEvent[]; ownerId: string }>;

export interface SessionKernel {
  /**
   * Applies one command: a redelivered command id returns its first outcome with `duplicate: true`;
   * a refusal returns `{ ok: false, error }` and writes nothing. Throws only when the store fails or
   * the append race is lost more than `maxConflictRetries` times (the caller redelivers).
   */
  execute(command: SessionCommand): Promise<CommandOutcome>;
  /** Snapshot + journal tail; never writes. */
  load(sessionId: string): Promise<LoadedSession>;
}

/** What `createSessionKernel` returns: for a publisher, `execute` that also hands back the committed events. */
export interface EventReportingKernel extends SessionKernel {
  executeWithEvents(command: SessionCommand): Promise<ExecutedCommand>;
}

const isConflict = (error: unknown): boolean => isBerthError(error) && error.code === ErrorCodes.CONCURRENCY_CONFLICT;

type Loaded = LoadedSession & { storedVersion: number };

/**
 * The latest state of recently used sessions, so a command does not re-read its snapshot. An entry
 * is only ever trusted for an append: the journal refuses the append (`ConcurrencyError`) when
 * another writer moved the session on, and the kernel then drops the entry and reloads. A refusal
 * or a no-op decided on a cached state is re-decided on a fresh load, since nothing checks it.
 */
class SessionCache {
  private readonly entries = new Map<string, Loaded>();
  constructor(private readonly capacity: number) {}

  get(sessionId: string): Loaded | undefined {
    return this.entries.get(sessionId);
  }

  /** Never moves an entry backwards (a slower commit finishing after a newer one). */
  remember(sessionId: string, loaded: Loaded): void {
    if (this.capacity === 0) return;
    const current = this.entries.get(sessionId);
    if (current && current.lastSeq >= loaded.lastSeq) return;
    this.entries.delete(sessionId);
    this.entries.set(sessionId, loaded);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  forget(sessionId: string): void {
    this.entries.delete(sessionId);
  }
}

export function createSessionKernel(deps: SessionKernelDeps): EventReportingKernel {
  const { journal, snapshots, sessions, clock } = deps;
  const maxRetries = deps.maxConflictRetries ?? 5;
  const bestEffortFailed = deps.onBestEffortFailure ?? (() => undefined);
  const cache = new SessionCache(deps.cachedSessions ?? 1_000);
  const observer = deps.observer;
  const seconds = (since: number): number => (performance.now() - since) / 1_000;

  /**
   * `foldedFrom` is the seq the snapshot state stands for (0 when folding from the first event);
   * `storedVersion` is what the snapshot store holds, the version a save must expect (so a snapshot
   * in an old format is overwritten, not left behind forever).
   */
  async function loadWithSnapshotVersion(sessionId: string): Promise<Loaded> {
    let state = initialState();
    let foldedFrom = 0;
    let storedVersion = 0;
    try {
      const snapshot = await snapshots.load(sessionId);
      storedVersion = snapshot?.version ?? 0;
      const session = snapshot === null ? null : snapshotSession(snapshot);
      if (snapshot !== null && session !== null) {
        state = session;
        foldedFrom = snapshot.version;
      }
    } catch (error) {
      // The journal is the truth; without a snapshot the state is folded from the first event.
      bestEffortFailed('snapshot.load', sessionId, error);
    }
    const tail = await journal.readEvents(sessionId, { afterSeq: foldedFrom, order: 'asc' });
    const lastSeq = tail.length > 0 ? tail[tail.length - 1].seq : foldedFrom;
    return { state: tail.reduce<SessionState>(evolve, state), lastSeq, storedVersion };
  }

  function stamp(command: SessionCommand, events: readonly SessionEvent[], afterSeq: number): RecordedEvent[] {
    const occurred_at = clock.now().toISOString();
    return events.map(
      (event, index) =>
        ({
          ...event,
          id: eventIdFor(command.meta.command_id, index),
          session_id: command.meta.session_id,
          seq: afterSeq + index + 1,
          schema_version: EVENT_SCHEMA_VERSIONS[event.type],
          command_id: command.meta.command_id,
          occurred_at,
        }) as RecordedEvent,
    );
  }

  const snapshotOf = (sessionId: string, state: SessionState, version: number) => ({
    sessionId,
    version,
    state: envelope(state),
    updatedAt: clock.now().toISOString(),
  });

  /** True when saved; false means another writer moved it on (a lagging snapshot is caught up from the journal). */
  async function saveSnapshot(sessionId: string, state: SessionState, version: number, expectedVersion: number): Promise<boolean> {
    try {
      return await snapshots.save(snapshotOf(sessionId, state, version), expectedVersion);
    } catch (error) {
      bestEffortFailed('snapshot.save', sessionId, error);
      return false;
    }
  }

  /**
   * Writes a decided command. Stores that can do it commit events, snapshot and read model in one
   * transaction; the others append (the commit point), then save the snapshot and project.
   * Returns the snapshot version now stored.
   */
  async function commit(sessionId: string, recorded: readonly RecordedEvent[], state: SessionState, loaded: Loaded): Promise<number> {
    const lastSeq = recorded[recorded.length - 1].seq;
    if (journal.commitCommand) {
      await journal.commitCommand({
        sessionId,
        events: recorded,
        snapshot: { snapshot: snapshotOf(sessionId, state, lastSeq), expectedVersion: loaded.storedVersion },
        record: state.exists ? projectSessionRecord(state, lastSeq, sessionId) : undefined,
      });
      return lastSeq;
    }
    await journal.appendEvents(sessionId, recorded);
    const saved = await saveSnapshot(sessionId, state, lastSeq, loaded.storedVersion);
    await project(sessionId, state, lastSeq);
    return saved ? lastSeq : loaded.storedVersion;
  }

  async function project(sessionId: string, state: SessionState, lastSeq: number): Promise<void> {
    if (state.exists) await sessions.upsert(projectSessionRecord(state, lastSeq, sessionId));
  }

  const summary = (events: readonly RecordedEvent[]) => events.map((e) => ({ id: e.id, seq: e.seq, type: e.type }));

  async function executeWithEvents(command: SessionCommand): Promise<ExecutedCommand> {
    const { session_id, command_id } = command.meta;
    let trustCache = true;
    for (let attempt = 0; ; ) {
      const already = await journal.eventsOfCommand(session_id, command_id);
      if (already.length > 0) {
        // Redelivery: the events are committed; re-projecting repairs a read model a crash left behind.
        cache.forget(session_id);
        const loaded = await loadWithSnapshotVersion(session_id);
        await project(session_id, loaded.state, loaded.lastSeq);
        return {
          outcome: { ok: true, command_id, session_id, events: summary(already), duplicate: true, last_seq: loaded.lastSeq },
          events: [],
          ownerId: loaded.state.owner_id,
        };
      }
      const cached = trustCache ? cache.get(session_id) : undefined;
      const loaded = cached ?? (await loadWithSnapshotVersion(session_id));
      let events: readonly SessionEvent[];
      const decideStart = performance.now();
      try {
        events = decide(command, loaded.state);
        observer?.decided(seconds(decideStart));
      } catch (error) {
        observer?.decided(seconds(decideStart));
        if (!isBerthError(error)) throw error;
        if (cached) {
          trustCache = false;
          continue;
        }
        return {
          outcome: { ok: false, command_id, session_id, error: { code: error.code, status: error.status, message: error.message, details: { ...error.details } } },
          events: [],
          ownerId: loaded.state.owner_id,
        };
      }
      if (events.length === 0) {
        if (cached) {
          trustCache = false;
          continue;
        }
        return { outcome: { ok: true, command_id, session_id, events: [], duplicate: false, last_seq: loaded.lastSeq }, events: [], ownerId: loaded.state.owner_id };
      }
      const recorded = stamp(command, events, loaded.lastSeq);
      const state = recorded.reduce<SessionState>(evolve, loaded.state);
      let storedVersion: number;
      const commitStart = performance.now();
      try {
        storedVersion = await commit(session_id, recorded, state, loaded);
        observer?.committed(seconds(commitStart));
      } catch (error) {
        cache.forget(session_id);
        trustCache = false;
        if (isConflict(error) && attempt++ < maxRetries) continue;
        throw error;
      }
      const lastSeq = recorded[recorded.length - 1].seq;
      cache.remember(session_id, { state, lastSeq, storedVersion });
      return {
        outcome: { ok: true, command_id, session_id, events: summary(recorded), duplicate: false, last_seq: lastSeq },
        events: recorded,
        ownerId: state.owner_id,
      };
    }
  }

  return {
    execute: async (command) => (await executeWithEvents(command)).outcome,
    executeWithEvents,
    load: async (sessionId) => {
      const { state, lastSeq } = await loadWithSnapshotVersion(sessionId);
      return { state, lastSeq };
    },
  };
}
