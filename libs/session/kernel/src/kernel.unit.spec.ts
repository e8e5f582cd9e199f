import { FixedClock } from '@berth/core/testing';
import type { CommandData, CommandType } from '@berth/contracts';
import { commandFor, createSessionData } from '@berth/contracts/testing';
import { BerthError, ErrorCodes } from '@berth/core';
import type { CommandCommit } from '@berth/ports';
import { createSessionKernel, type SessionKernelDeps } from './kernel';
import { InMemoryJournal, InMemorySnapshots } from './testing';

const SID = 'sesn_k';
let n = 0;
const cmd = <T extends CommandType>(type: T, data: CommandData<T>, commandId = `cmd_k${++n}`) =>
  commandFor(type, SID, data, { command_id: commandId, actor: 'owner_1', issued_at: '2026-01-01T00:00:00.000Z' });
const create = (commandId?: string) => cmd('CreateSession', createSessionData({ title: 'hello' }), commandId);
const bind = () => cmd('BindSandbox', { sandbox_id: 'sbx_1', generation: 1, expires_at: null, warm: false });
const message = (turn_id: string) => cmd('SubmitUserMessage', { turn_id, content: [{ type: 'text', text: 'hi' }] });

function setup(over: Partial<SessionKernelDeps> = {}) {
  const journal = new InMemoryJournal();
  const { snapshots, sessions } = journal;
  const clock = new FixedClock(new Date('2026-03-01T10:00:00.000Z'));
  const failures: string[] = [];
  const kernel = createSessionKernel({ journal, snapshots, clock, onBestEffortFailure: (what, _id, error) => failures.push(`${what}: ${String(error)}`), ...over });
  return { kernel, journal, snapshots, sessions, clock, failures };
}

describe('SessionKernel.execute', () => {
  it('stamps events with gap-free seqs, deterministic ids, the clock and schema versions', async () => {
    const { kernel, journal } = setup();
    const outcome = await kernel.execute(create('cmd_c1'));
    expect(outcome).toEqual({
      ok: true,
      command_id: 'cmd_c1',
      session_id: SID,
      duplicate: false,
      last_seq: 2,
      events: [
        { id: 'sevt_c1_0', seq: 1, type: 'SessionCreated' },
        { id: 'sevt_c1_1', seq: 2, type: 'SandboxRequested' },
      ],
    });
    expect(journal.all(SID)[0]).toMatchObject({ session_id: SID, command_id: 'cmd_c1', schema_version: 1, occurred_at: '2026-03-01T10:00:00.000Z' });
    await kernel.execute(bind());
    expect(journal.all(SID).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('answers a redelivered command with its first outcome, marked duplicate, and appends nothing', async () => {
    const { kernel, journal } = setup();
    const first = await kernel.execute(create('cmd_dup'));
    const again = await kernel.execute(create('cmd_dup'));
    expect(again).toEqual({ ...first, duplicate: true });
    expect(journal.commits).toHaveLength(1);
  });

  it('turns a refusal into an error outcome and writes nothing', async () => {
    const { kernel, journal, sessions } = setup();
    const outcome = await kernel.execute(message('turn_1'));
    expect(outcome).toEqual({
      ok: false,
      command_id: expect.any(String),
      session_id: SID,
      error: { code: 'NOT_FOUND', status: 404, message: `session ${SID} not found`, details: {} },
    });
    expect(journal.commits).toHaveLength(0);
    expect(await sessions.getById(SID)).toBeNull();
  });

  it('answers a no-op with no events and the current last seq', async () => {
    const { kernel, journal } = setup();
    await kernel.execute(create());
    const outcome = await kernel.execute(cmd('InterruptTurn', {}));
    expect(outcome).toMatchObject({ ok: true, events: [], duplicate: false, last_seq: 2 });
    expect(journal.commits).toHaveLength(1);
  });

  it('commits the read-model row with the public status in each command', async () => {
    const { kernel, sessions } = setup();
    await kernel.execute(create());
    await kernel.execute(bind());
    await kernel.execute(message('turn_1'));
    expect(await sessions.get('owner_1', SID)).toMatchObject({
      id: SID,
      owner_id: 'owner_1',
      agent_id: 'agent_1',
      title: 'hello',
      status: 'running',
      last_seq: 5,
      created_at: '2026-03-01T10:00:00.000Z',
      deleted: false,
      view: { lifecycle: 'READY', turn: { id: 'turn_1', status: 'RUNNING' } },
    });
    expect(await sessions.get('owner_2', SID)).toBeNull();
  });

  it('catches up from the snapshot plus the journal tail', async () => {
    const { kernel, journal, snapshots, clock } = setup();
    await kernel.execute(create());
    expect(snapshots.get(SID)?.version).toBe(2);
    // Another kernel instance committed after the snapshot, and its snapshot was left out.
    const other = createSessionKernel({ journal, snapshots: new InMemorySnapshots(), clock });
    snapshots.leaveOut = true;
    await other.execute(bind());
    expect(snapshots.get(SID)?.version).toBe(2);
    const loaded = await kernel.load(SID);
    expect(loaded.lastSeq).toBe(3);
    expect(loaded.state.sandbox).toEqual({ sandbox_id: 'sbx_1', generation: 1, expires_at: null, lease: null });
  });

  it('re-decides on fresh state after losing a commit race', async () => {
    const { kernel, journal } = setup();
    await kernel.execute(create());
    await kernel.execute(bind());
    journal.failNextCommitWithConflict = 1;
    const outcome = await kernel.execute(message('turn_1'));
    expect(outcome).toMatchObject({ ok: true, duplicate: false, last_seq: 5 });
    expect(journal.all(SID).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it('sees what the winner of a race wrote before deciding again', async () => {
    const { kernel, journal } = setup();
    await kernel.execute(create());
    await kernel.execute(bind());
    const winner = createSessionKernel({ journal, snapshots: new InMemorySnapshots(), clock: new FixedClock() });
    await winner.execute(message('turn_1'));
    // Our kernel remembers the state before turn_1; the commit race sends it to the journal, so turn_2 queues behind turn_1.
    await kernel.execute(message('turn_2'));
    expect(journal.all(SID).at(-1)).toMatchObject({ type: 'UserMessageReceived', data: { turn_id: 'turn_2', queued: true } });
  });

  it('gives up after maxConflictRetries lost races and lets the caller redeliver', async () => {
    const { kernel, journal } = setup({ maxConflictRetries: 2 });
    await kernel.execute(create());
    journal.failNextCommitWithConflict = 3;
    await expect(kernel.execute(bind())).rejects.toMatchObject({ code: 'CONCURRENCY_CONFLICT' });
    journal.failNextCommitWithConflict = 0;
    await expect(kernel.execute(bind())).resolves.toMatchObject({ ok: true });
  });

  it('treats snapshots as a cache: an unreadable or left-out snapshot never fails a command', async () => {
    const { kernel, snapshots, sessions, failures } = setup();
    snapshots.leaveOut = true;
    snapshots.failLoads = true;
    await expect(kernel.execute(create())).resolves.toMatchObject({ ok: true, last_seq: 2 });
    await expect(kernel.execute(bind())).resolves.toMatchObject({ ok: true, last_seq: 3 });
    expect((await sessions.getById(SID))?.view).toMatchObject({ lifecycle: 'READY' });
    expect(failures.some((f) => f.startsWith('snapshot.load'))).toBe(true);
  });

  it('ignores a snapshot in a format it does not know, folds the journal instead, and replaces it', async () => {
    const { kernel, snapshots } = setup();
    await kernel.execute(create());
    snapshots.put({ sessionId: SID, version: 2, state: { something: 'else' }, updatedAt: 'x' });
    expect((await kernel.load(SID)).state.exists).toBe(true);
    await kernel.execute(bind());
    expect(snapshots.get(SID)).toMatchObject({ version: 3, state: { format: 2, session: { lifecycle: 'READY' } } });
  });

  it('ignores a snapshot ahead of the journal (an inconsistent restore) and commits after the real last seq', async () => {
    const { kernel, journal, snapshots, failures } = setup({ cachedSessions: 0 });
    await kernel.execute(create());
    await kernel.execute(bind());
    await kernel.execute(message('turn_1'));
    // The journal came back from an older backup than the snapshot did.
    journal.truncate(SID, 3);
    expect(snapshots.get(SID)?.version).toBe(5);
    const loaded = await kernel.load(SID);
    expect(loaded).toMatchObject({ lastSeq: 3, state: { conversation: 'IDLE', current_turn: null } });
    expect(failures).toContainEqual(expect.stringMatching(/snapshot at seq 5 is ahead of the journal/));
    await expect(kernel.execute(message('turn_2'))).resolves.toMatchObject({ ok: true, last_seq: 5 });
    expect(journal.all(SID).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(snapshots.get(SID)).toMatchObject({ version: 5, state: { session: { current_turn: { id: 'turn_2' } } } });
  });

  it('answers a commit the store cannot hold with a PAYLOAD_TOO_LARGE refusal and writes nothing', async () => {
    const journal = new (class extends InMemoryJournal {
      override async commit(commit: CommandCommit): Promise<void> {
        if (commit.events.some((e) => e.type === 'UserMessageReceived')) throw new BerthError(ErrorCodes.PAYLOAD_TOO_LARGE, 413, 'event too large');
        return super.commit(commit);
      }
    })();
    const kernel = createSessionKernel({ journal, snapshots: journal.snapshots, clock: new FixedClock() });
    await kernel.execute(create());
    await kernel.execute(bind());
    const outcome = await kernel.execute(message('turn_1'));
    expect(outcome).toMatchObject({ ok: false, error: { code: 'PAYLOAD_TOO_LARGE', status: 413, message: 'event too large' } });
    expect(journal.all(SID).map((e) => e.type)).not.toContain('UserMessageReceived');
    // The session goes on.
    await expect(kernel.execute(cmd('ArchiveSession', {}))).resolves.toMatchObject({ ok: true });
  });

  it('re-decides a refusal against the journal when the state it remembered is behind', async () => {
    const { kernel, journal, clock } = setup();
    await kernel.execute(create());
    await kernel.execute(bind());
    // Another kernel starts turn_1; ours still remembers a session with no turn.
    const other = createSessionKernel({ journal, snapshots: new InMemorySnapshots(), clock });
    await other.execute(message('turn_1'));
    const outcome = await kernel.execute(cmd('CompleteTurn', { turn_id: 'turn_1', generation: 1, interrupted: false, harness_session_id: null }));
    expect(outcome).toMatchObject({ ok: true, duplicate: false });
    expect(journal.all(SID).at(-1)).toMatchObject({ type: 'TurnCompleted', data: { turn_id: 'turn_1' } });
  });

  it('hands back exactly the events it committed', async () => {
    const { kernel, journal } = setup();
    const created = await kernel.executeWithEvents(create());
    expect(created.events).toEqual(journal.all(SID));
    const again = await kernel.executeWithEvents(create(created.outcome.command_id));
    expect(again).toMatchObject({ outcome: { ok: true, duplicate: true }, events: [] });
  });
});

describe('SessionKernel commits', () => {
  it('writes events, snapshot and read-model row through one commit per command', async () => {
    const { kernel, journal, snapshots, sessions } = setup();
    await kernel.execute(create());
    await kernel.execute(bind());
    expect(journal.commits.map((c) => [c.events.map((e) => e.seq), c.snapshot?.version, c.record?.last_seq])).toEqual([
      [[1, 2], 2, 2],
      [[3], 3, 3],
    ]);
    expect(snapshots.get(SID)?.version).toBe(3);
    expect(await sessions.getById(SID)).toMatchObject({ last_seq: 3, status: 'idle' });
  });
});
