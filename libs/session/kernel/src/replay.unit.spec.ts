import type { RecordedEvent } from '@berth/contracts';
import { FixedClock } from '@berth/core/testing';
import type { SessionSnapshot } from '@berth/ports';
import { evolve, initialState, type SessionState } from '@berth/session-domain';
import { createSessionKernel } from './kernel';
import { auditSession, diffJson, replaySession } from './replay';
import { commandsFor, InMemoryJournal } from './testing';

const SID = 'sesn_replay';

/** A session driven through the production kernel: create, bind, one completed turn, one running. */
async function recordedSession() {
  // The journal's commit writes the snapshot and the read-model row, as every store does.
  const journal = new InMemoryJournal();
  const { snapshots, sessions } = journal;
  const kernel = createSessionKernel({ journal, snapshots, clock: new FixedClock(new Date('2026-03-01T10:00:00.000Z')), cachedSessions: 0 });
  const c = commandsFor(SID);
  for (const command of [c.create(), c.bind(), c.message('turn_1'), c.complete('turn_1'), c.message('turn_2')]) {
    expect((await kernel.execute(command)).ok).toBe(true);
  }
  const events = journal.all(SID);
  const record = (await sessions.getById(SID))!;
  return { journal, snapshots, sessions, events, record, store: { journal, snapshots, sessions } };
}

const fold = (events: readonly RecordedEvent[]): SessionState => events.reduce<SessionState>(evolve, initialState());
const snapshotOf = (events: readonly RecordedEvent[], session: SessionState = fold(events)): SessionSnapshot => ({
  sessionId: SID,
  version: events[events.length - 1].seq,
  state: { format: 2, session },
  updatedAt: '2026-03-01T10:00:00.000Z',
});

describe('berth replay (auditSession)', () => {
  it('finds no difference in what the kernel stored', async () => {
    const { store, events } = await recordedSession();
    const report = await replaySession(store, SID);
    expect(report).toEqual({
      session_id: SID,
      last_seq: events.length,
      snapshot: { status: 'compared', version: events.length },
      read_model: { status: 'compared', last_seq: events.length },
      differences: [],
    });
  });

  it('reports each corrupted snapshot field with its path, the stored and the replayed value', async () => {
    const { store, snapshots } = await recordedSession();
    const stored = snapshots.get(SID)!;
    const session = (stored.state as { session: SessionState }).session;
    snapshots.put({ ...stored, state: { format: 2, session: { ...session, conversation: 'IDLE', usage: { ...session.usage, output_tokens: 999 } } } });
    const report = await replaySession(store, SID);
    expect(report.differences).toEqual([
      { where: 'snapshot', path: 'conversation', stored: 'IDLE', replayed: 'RUNNING' },
      { where: 'snapshot', path: 'usage.output_tokens', stored: 999, replayed: session.usage.output_tokens },
    ]);
  });

  it('compares a lagging snapshot with the fold up to its own version: the lag alone is no difference', async () => {
    const { events, record } = await recordedSession();
    const early = events.slice(0, 3);
    expect(auditSession({ sessionId: SID, events, snapshot: snapshotOf(early), record })).toMatchObject({ snapshot: { status: 'compared', version: 3 }, differences: [] });
    // The full state would be "right" for the journal's end, but not for seq 3.
    const ahead = snapshotOf(early, fold(events));
    expect(auditSession({ sessionId: SID, events, snapshot: ahead, record }).differences.length).toBeGreaterThan(0);
  });

  it('reports a snapshot past the end of the journal, and ignores one in an older format', async () => {
    const { events, record } = await recordedSession();
    const beyond = { ...snapshotOf(events), version: events.length + 5 };
    expect(auditSession({ sessionId: SID, events, snapshot: beyond, record }).differences).toEqual([{ where: 'snapshot', path: 'version', stored: events.length + 5, replayed: events.length }]);
    const old = { ...snapshotOf(events), state: { format: 0, whatever: true } };
    expect(auditSession({ sessionId: SID, events, snapshot: old, record })).toMatchObject({ snapshot: { status: 'old_format' }, differences: [] });
  });

  it('reports a read-model row that differs, lags, or is missing', async () => {
    const { events, record } = await recordedSession();
    const snapshot = snapshotOf(events);
    const edited = { ...record, status: 'idle', title: 'edited' };
    expect(auditSession({ sessionId: SID, events, snapshot, record: edited }).differences).toEqual([
      { where: 'read_model', path: 'title', stored: 'edited', replayed: record.title },
      { where: 'read_model', path: 'status', stored: 'idle', replayed: 'running' },
    ]);
    expect(auditSession({ sessionId: SID, events: [...events, { ...events[events.length - 1], seq: events.length + 1 }], snapshot, record }).differences).toEqual([
      { where: 'read_model', path: 'last_seq', stored: events.length, replayed: events.length + 1 },
    ]);
    const missing = auditSession({ sessionId: SID, events, snapshot, record: null });
    expect(missing.differences).toEqual([{ where: 'read_model', path: '', stored: null, replayed: record }]);
  });

  it('reports a gap in the journal seqs', async () => {
    const { events, record } = await recordedSession();
    const gapped = events.filter((e) => e.seq !== 2);
    const report = auditSession({ sessionId: SID, events: gapped, snapshot: null, record });
    expect(report.differences.filter((d) => d.where === 'journal')[0]).toEqual({ where: 'journal', path: '[1].seq', stored: 3, replayed: 2 });
  });
});

describe('diffJson', () => {
  it('lists leaf paths, compares as stored (undefined fields dropped) and arrays by index or whole', () => {
    expect(diffJson({ a: 1, b: { c: [1, 2] }, u: undefined }, { a: 1, b: { c: [1, 3] } })).toEqual([{ path: 'b.c[1]', stored: 2, replayed: 3 }]);
    expect(diffJson({ list: [1] }, { list: [1, 2] })).toEqual([{ path: 'list', stored: [1], replayed: [1, 2] }]);
    expect(diffJson({ a: 1 }, { a: 1, extra: 'x' })).toEqual([{ path: 'extra', stored: undefined, replayed: 'x' }]);
    expect(diffJson({ same: { deep: true } }, { same: { deep: true } })).toEqual([]);
  });
});
