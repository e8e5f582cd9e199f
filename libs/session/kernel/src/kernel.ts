import { ErrorCodes, isBerthError, type Clock } from '@berth/core';
import { EVENT_SCHEMA_VERSIONS, eventIdFor, type CommandOutcome, type RecordedEvent, type SessionCommand, type SessionEvent } from '@berth/contracts';
import type { SessionJournal, SessionReadModel, SessionSnapshots } from '@berth/ports';
import { decide, evolve, initialState, type SessionState } from '@berth/session-domain';
import { projectSessionRecord } from './session-record';

export type SessionKernelDeps = Readonly<{
  journal: SessionJournal;
  snapshots: SessionSnapshots;
  sessions: SessionReadModel;
  clock: Clock;
  /** How many times a lost append race is retried with fresh state before giving up. Default 5. */
  maxConflictRetries?: number;
  /** Told about best-effort work that failed without failing the command (snapshot reads and writes). */
  onBestEffortFailure?: (what: 'snapshot.load' | 'snapshot.save', sessionId: string, error: unknown) => void;
}>;

/** A session's state as the kernel sees it: folded up to `lastSeq`. */
export type LoadedSession = Readonly<{ state: SessionState; lastSeq: number }>;

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

/** Snapshots hold the state in a versioned envelope, so a change of state shape just ignores old ones. */
const SNAPSHOT_FORMAT = 1;
type SnapshotEnvelope = Readonly<{ format: number; session: SessionState }>;
const isEnvelope = (value: unknown): value is SnapshotEnvelope =>
  typeof value === 'object' && value !== null && (value as SnapshotEnvelope).format === SNAPSHOT_FORMAT && typeof (value as SnapshotEnvelope).session === 'object';

const isConflict = (error: unknown): boolean => isBerthError(error) && error.code === ErrorCodes.CONCURRENCY_CONFLICT;

export function createSessionKernel(deps: SessionKernelDeps): SessionKernel {
  const { journal, snapshots, sessions, clock } = deps;
  const maxRetries = deps.maxConflictRetries ?? 5;
  const bestEffortFailed = deps.onBestEffortFailure ?? (() => undefined);

  /**
   * `foldedFrom` is the seq the snapshot state stands for (0 when folding from the first event);
   * `storedVersion` is what the snapshot store holds, the version a save must expect (so a snapshot
   * in an old format is overwritten, not left behind forever).
   */
  async function loadWithSnapshotVersion(sessionId: string): Promise<LoadedSession & { storedVersion: number }> {
    let state = initialState();
    let foldedFrom = 0;
    let storedVersion = 0;
    try {
      const snapshot = await snapshots.load(sessionId);
      storedVersion = snapshot?.version ?? 0;
      if (snapshot !== null && isEnvelope(snapshot.state)) {
        state = snapshot.state.session;
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

  async function saveSnapshot(sessionId: string, state: SessionState, version: number, expectedVersion: number): Promise<void> {
    try {
      // A false return means another writer moved it on; a lagging snapshot is caught up from the journal.
      await snapshots.save({ sessionId, version, state: { format: SNAPSHOT_FORMAT, session: state }, updatedAt: clock.now().toISOString() }, expectedVersion);
    } catch (error) {
      bestEffortFailed('snapshot.save', sessionId, error);
    }
  }

  async function project(sessionId: string, state: SessionState, lastSeq: number): Promise<void> {
    if (state.exists) await sessions.upsert(projectSessionRecord(state, lastSeq, sessionId));
  }

  const summary = (events: readonly RecordedEvent[]) => events.map((e) => ({ id: e.id, seq: e.seq, type: e.type }));

  async function execute(command: SessionCommand): Promise<CommandOutcome> {
    const { session_id, command_id } = command.meta;
    for (let attempt = 0; ; attempt++) {
      const already = await journal.eventsOfCommand(session_id, command_id);
      if (already.length > 0) {
        // Redelivery: the events are committed; re-projecting repairs a read model a crash left behind.
        const loaded = await loadWithSnapshotVersion(session_id);
        await project(session_id, loaded.state, loaded.lastSeq);
        return { ok: true, command_id, session_id, events: summary(already), duplicate: true, last_seq: loaded.lastSeq };
      }
      const loaded = await loadWithSnapshotVersion(session_id);
      let events: readonly SessionEvent[];
      try {
        events = decide(command, loaded.state);
      } catch (error) {
        if (!isBerthError(error)) throw error;
        return { ok: false, command_id, session_id, error: { code: error.code, status: error.status, message: error.message, details: { ...error.details } } };
      }
      if (events.length === 0) return { ok: true, command_id, session_id, events: [], duplicate: false, last_seq: loaded.lastSeq };
      const recorded = stamp(command, events, loaded.lastSeq);
      try {
        await journal.appendEvents(session_id, recorded);
      } catch (error) {
        if (isConflict(error) && attempt < maxRetries) continue;
        throw error;
      }
      const state = recorded.reduce<SessionState>(evolve, loaded.state);
      const lastSeq = recorded[recorded.length - 1].seq;
      await saveSnapshot(session_id, state, lastSeq, loaded.storedVersion);
      await project(session_id, state, lastSeq);
      return { ok: true, command_id, session_id, events: summary(recorded), duplicate: false, last_seq: lastSeq };
    }
  }

  return {
    execute,
    load: async (sessionId) => {
      const { state, lastSeq } = await loadWithSnapshotVersion(sessionId);
      return { state, lastSeq };
    },
  };
}
