import { ErrorCodes, isBerthError, type BerthError, type Clock } from '@berth/core';
import { EVENT_SCHEMA_VERSIONS, eventIdFor, type CommandOutcome, type RecordedEvent, type SessionCommand, type SessionEvent } from '@berth/contracts';
import type { SessionJournal, SessionSnapshot, SessionSnapshots } from '@berth/ports';
import { decide, evolve, initialState, type SessionState } from '@berth/session-domain';
import { projectSessionRecord } from './session-record';
import { envelope, snapshotSession } from './snapshot-envelope';

export type SessionKernelDeps = Readonly<{
  journal: SessionJournal;
  snapshots: SessionSnapshots;
  clock: Clock;
  /** How many times a lost commit race is retried with fresh state before giving up. Default 5. */
  maxConflictRetries?: number;
  /** Told about a snapshot that could not be used (unreadable, or ahead of the journal): the state is folded from the journal instead. */
  onBestEffortFailure?: (what: 'snapshot.load', sessionId: string, error: unknown) => void;
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
   * a refusal (including a commit the store refuses as too large) returns `{ ok: false, error }` and
   * writes nothing. Throws only when the store fails or the commit race is lost more than
   * `maxConflictRetries` times (the caller redelivers).
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
/** A commit the store cannot hold: nothing was written, and trying again cannot help. */
const isTooLarge = (error: unknown): error is BerthError => isBerthError(error) && error.code === ErrorCodes.PAYLOAD_TOO_LARGE;

/**
 * The latest state of recently used sessions, so a command does not re-read its snapshot. An entry
 * is only ever trusted for a commit: the journal refuses the commit (`ConcurrencyError`) when
 * another writer moved the session on, and the kernel then drops the entry and reloads. A refusal
 * or a no-op decided on a cached state is re-decided on a fresh load, since nothing checks it.
 */
class SessionCache {
  private readonly entries = new Map<string, LoadedSession>();
  constructor(private readonly capacity: number) {}

  get(sessionId: string): LoadedSession | undefined {
    return this.entries.get(sessionId);
  }

  /** Never moves an entry backwards (a slower commit finishing after a newer one). */
  remember(sessionId: string, loaded: LoadedSession): void {
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
  const { journal, snapshots, clock } = deps;
  const maxRetries = deps.maxConflictRetries ?? 5;
  const bestEffortFailed = deps.onBestEffortFailure ?? (() => undefined);
  const cache = new SessionCache(deps.cachedSessions ?? 1_000);
  const observer = deps.observer;
  const seconds = (since: number): number => (performance.now() - since) / 1_000;

  /**
   * The snapshot plus the journal tail after it. The tail is read from the snapshot's own last
   * event on: a snapshot whose event is not in the journal is ahead of it (a store restored from an
   * inconsistent backup) and is ignored, so the session's position always comes from the journal.
   */
  async function load(sessionId: string): Promise<LoadedSession> {
    let snapshot: SessionSnapshot | null = null;
    try {
      snapshot = await snapshots.load(sessionId);
    } catch (error) {
      // The journal is the truth; without a snapshot the state is folded from the first event.
      bestEffortFailed('snapshot.load', sessionId, error);
    }
    const session = snapshot === null ? null : snapshotSession(snapshot);
    if (snapshot !== null && session !== null) {
      const tail = await journal.readEvents(sessionId, { afterSeq: snapshot.version - 1, order: 'asc' });
      if (tail[0]?.seq === snapshot.version) {
        const rest = tail.slice(1);
        return { state: rest.reduce<SessionState>(evolve, session), lastSeq: rest.length > 0 ? rest[rest.length - 1].seq : snapshot.version };
      }
      bestEffortFailed('snapshot.load', sessionId, new Error(`the snapshot at seq ${snapshot.version} is ahead of the journal; folding from the first event`));
    }
    const events = await journal.readEvents(sessionId, { order: 'asc' });
    return { state: events.reduce<SessionState>(evolve, initialState()), lastSeq: events.length > 0 ? events[events.length - 1].seq : 0 };
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

  /** One atomic commit per command: the events, the snapshot at the last of them, the read-model row. */
  async function commit(sessionId: string, recorded: readonly RecordedEvent[], state: SessionState): Promise<void> {
    const lastSeq = recorded[recorded.length - 1].seq;
    await journal.commit({
      sessionId,
      events: recorded,
      snapshot: { sessionId, version: lastSeq, state: envelope(state), updatedAt: clock.now().toISOString() },
      record: state.exists ? projectSessionRecord(state, lastSeq, sessionId) : undefined,
    });
  }

  const summary = (events: readonly RecordedEvent[]) => events.map((e) => ({ id: e.id, seq: e.seq, type: e.type }));

  async function executeWithEvents(command: SessionCommand): Promise<ExecutedCommand> {
    const { session_id, command_id } = command.meta;
    let trustCache = true;
    for (let attempt = 0; ; ) {
      const already = await journal.eventsOfCommand(session_id, command_id);
      if (already.length > 0) {
        // Redelivery: the commit that made these events also wrote the snapshot and the row.
        cache.forget(session_id);
        const loaded = await load(session_id);
        return {
          outcome: { ok: true, command_id, session_id, events: summary(already), duplicate: true, last_seq: loaded.lastSeq },
          events: [],
          ownerId: loaded.state.owner_id,
        };
      }
      const cached = trustCache ? cache.get(session_id) : undefined;
      const loaded = cached ?? (await load(session_id));
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
        return { outcome: refusal(command, error), events: [], ownerId: loaded.state.owner_id };
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
      const commitStart = performance.now();
      try {
        await commit(session_id, recorded, state);
        observer?.committed(seconds(commitStart));
      } catch (error) {
        cache.forget(session_id);
        trustCache = false;
        if (isConflict(error) && attempt++ < maxRetries) continue;
        if (isTooLarge(error)) return { outcome: refusal(command, error), events: [], ownerId: loaded.state.owner_id };
        throw error;
      }
      const lastSeq = recorded[recorded.length - 1].seq;
      cache.remember(session_id, { state, lastSeq });
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
    load,
  };
}

const refusal = (command: SessionCommand, error: BerthError): CommandOutcome => ({
  ok: false,
  command_id: command.meta.command_id,
  session_id: command.meta.session_id,
  error: { code: error.code, status: error.status, message: error.message, details: { ...error.details } },
});
