// Seed: ReconcileRuntimeBindingResurrectionTests (see docs/seed-map.md).
// AstraBox relinks a TERMINATED row that came back READY by force-writing the snapshot lifecycle.
// Here the resurrection is the RecoverSession command itself: the kernel commits it with its snapshot
// and read-model row in one commit, so reads stop reporting a dead session.
import { commandFor } from '@berth/contracts/testing';
import { Probes, seedHarness } from '../testing/flow-harness';

const SID = 'sesn_res';
const OWNER = 'owner_1';

describe('ReconcileRuntimeBindingResurrectionTests', () => {
  it('terminated to ready updates the snapshot and the read model', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1), c.terminate()]);
    expect((await h.sessions.getById(SID))?.status).toBe('terminated');

    const result = await h.flows.recoverSession(OWNER, SID);

    expect(result).toMatchObject({ outcome: 'recreated', view: { lifecycle: 'READY', status: 'idle' } });
    expect(h.snapshots.get(SID)?.state).toMatchObject({ session: { lifecycle: 'READY' } });
    expect(await h.sessions.getById(SID)).toMatchObject({ status: 'idle', view: { lifecycle: 'READY', runtime_unavailable: true } });
  });

  it('a read does not resurrect: reading a terminated session writes nothing', async () => {
    const h = seedHarness();
    const events = await h.given(SID, (c) => [c.create(), c.bind(1), c.terminate()]);
    const saves = h.snapshots.writes.length;
    const rows = h.sessions.writes;

    const read = await h.flows.getSession(OWNER, SID);

    expect(read.view).toMatchObject({ status: 'terminated', lifecycle: 'TERMINATED' });
    expect(h.journal.all(SID)).toHaveLength(events);
    expect(h.snapshots.writes).toHaveLength(saves);
    expect(h.sessions.writes).toBe(rows);
    expect(h.kernel.sent).toEqual([]);
  });

  it('ready to ready does not change the lifecycle', async () => {
    const h = seedHarness();
    const before = await h.given(SID, (c) => [c.create(), c.bind(1)]);
    h.prober.answer = Probes.running;

    const result = await h.flows.recoverSession(OWNER, SID);

    expect(result.outcome).toBe('reattached');
    expect(h.journal.all(SID).slice(before).map((e) => e.type)).toEqual(['SessionRecovered']);
    expect(result.view).toMatchObject({ lifecycle: 'READY', runtime_unavailable: false, sandbox: { sandbox_id: 'sbx_1' } });
  });

  it('terminated staying terminated: a late sandbox bind does not bring it back', async () => {
    const h = seedHarness();
    // The startup was still running when the session was terminated; its bind arrives afterwards.
    const before = await h.given(SID, (c) => [c.create(), c.terminate()]);

    const late = await h.kernel.execute(
      commandFor('BindSandbox', SID, { sandbox_id: 'sbx_1', generation: 1, expires_at: null, warm: false }, {
        command_id: 'cmd_late',
        actor: 'sandbox-manager',
        issued_at: '2026-01-01T00:00:00.000Z',
      }),
    );

    expect(late).toMatchObject({ ok: true, events: [] });
    expect(h.journal.all(SID)).toHaveLength(before);
    expect((await h.flows.getSession(OWNER, SID)).view).toMatchObject({ lifecycle: 'TERMINATED', sandbox: null });
  });

  it('a failing snapshot write is suppressed and the resurrection still lands', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1), c.terminate()]);
    // The store leaves the snapshot out of the commit (too large to hold): the stored one lags.
    h.snapshots.leaveOut = true;
    const saves = h.snapshots.writes.length;

    const result = await h.flows.recoverSession(OWNER, SID);

    expect(result).toMatchObject({ outcome: 'recreated', view: { lifecycle: 'READY' } });
    expect(h.snapshots.writes.length).toBe(saves + 1);
    expect(h.snapshots.get(SID)?.state).toMatchObject({ session: { lifecycle: 'TERMINATED' } });
    expect(await h.sessions.getById(SID)).toMatchObject({ view: { lifecycle: 'READY' } });
    expect((await h.kernel.load(SID)).state.lifecycle).toBe('READY');
  });

  it('a missing snapshot store is tolerated: state comes from the journal', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1), c.terminate()]);
    h.snapshots.failLoads = true;

    const result = await h.flows.recoverSession(OWNER, SID);

    expect(result).toMatchObject({ outcome: 'recreated', view: { lifecycle: 'READY' } });
    expect(await h.sessions.getById(SID)).toMatchObject({ status: 'idle' });
  });
});
