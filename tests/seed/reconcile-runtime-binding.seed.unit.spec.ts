// Seed: ReconcileRuntimeBindingResurrectionTests (see docs/seed-map.md). Pins SessionUseCases.recover
// and .find over the kernel's commit (createSessionKernel: one commit of events, snapshot and read-model row).
// AstraBox relinks a TERMINATED row that came back READY by force-writing the snapshot lifecycle;
// here the resurrection is the RecoverSession command itself.
import { commandFor } from '@berth/contracts/testing';
import { OWNER, Probes, seedPlatform } from './support/seed-platform';

const SID = 'sesn_res';

describe('ReconcileRuntimeBindingResurrectionTests', () => {
  it('terminated to ready updates the snapshot and the read model', async () => {
    const p = seedPlatform();
    await p.given(SID, (c) => [c.create(), c.bind(1), c.terminate()]);
    expect((await p.sessions.getById(SID))?.status).toBe('terminated');

    const result = await p.useCases.recover(OWNER, SID);

    expect(result.recover.outcome).toBe('recreated');
    expect(result.record.view).toMatchObject({ lifecycle: 'READY', status: 'idle' });
    expect(p.snapshots.get(SID)?.state).toMatchObject({ session: { lifecycle: 'READY' } });
    expect(await p.sessions.getById(SID)).toMatchObject({ status: 'idle', view: { lifecycle: 'READY', runtime_unavailable: true } });
  });

  it('a read does not resurrect: reading a terminated session writes nothing', async () => {
    const p = seedPlatform();
    const events = await p.given(SID, (c) => [c.create(), c.bind(1), c.terminate()]);
    const saves = p.snapshots.writes.length;
    const rows = p.sessions.writes;

    const read = await p.useCases.find(OWNER, SID);

    expect(read.view).toMatchObject({ status: 'terminated', lifecycle: 'TERMINATED' });
    expect(p.journal.all(SID)).toHaveLength(events);
    expect(p.snapshots.writes).toHaveLength(saves);
    expect(p.sessions.writes).toBe(rows);
    expect(p.sent).toEqual([]);
  });

  it('ready to ready does not change the lifecycle', async () => {
    const p = seedPlatform();
    const before = await p.given(SID, (c) => [c.create(), c.bind(1)]);
    p.probe.answer = Probes.running;

    const result = await p.useCases.recover(OWNER, SID);

    expect(result.recover.outcome).toBe('reattached');
    expect(p.journal.all(SID).slice(before).map((e) => e.type)).toEqual(['SessionRecovered']);
    expect(result.record.view).toMatchObject({ lifecycle: 'READY', runtime_unavailable: false, sandbox: { sandbox_id: 'sbx_1' } });
  });

  it('terminated staying terminated: a late sandbox bind does not bring it back', async () => {
    const p = seedPlatform();
    // The startup was still running when the session was terminated; its bind arrives afterwards.
    const before = await p.given(SID, (c) => [c.create(), c.terminate()]);

    const late = await p.kernel.execute(
      commandFor('BindSandbox', SID, { sandbox_id: 'sbx_1', generation: 1, expires_at: null, warm: false }, {
        command_id: 'cmd_late',
        actor: 'sandbox-manager',
        issued_at: '2026-01-01T00:00:00.000Z',
      }),
    );

    expect(late).toMatchObject({ ok: true, events: [] });
    expect(p.journal.all(SID)).toHaveLength(before);
    expect((await p.useCases.find(OWNER, SID)).view).toMatchObject({ lifecycle: 'TERMINATED', sandbox: null });
  });

  it('a failing snapshot write is suppressed and the resurrection still lands', async () => {
    const p = seedPlatform();
    await p.given(SID, (c) => [c.create(), c.bind(1), c.terminate()]);
    // The store leaves the snapshot out of the commit (too large to hold): the stored one lags.
    p.snapshots.leaveOut = true;
    const saves = p.snapshots.writes.length;

    const result = await p.useCases.recover(OWNER, SID);

    expect(result.recover.outcome).toBe('recreated');
    expect(result.record.view).toMatchObject({ lifecycle: 'READY' });
    expect(p.snapshots.writes.length).toBe(saves + 1);
    expect(p.snapshots.get(SID)?.state).toMatchObject({ session: { lifecycle: 'TERMINATED' } });
    expect(await p.sessions.getById(SID)).toMatchObject({ view: { lifecycle: 'READY' } });
    expect((await p.kernel.load(SID)).state.lifecycle).toBe('READY');
  });

  it('a missing snapshot store is tolerated: state comes from the journal', async () => {
    const p = seedPlatform();
    await p.given(SID, (c) => [c.create(), c.bind(1), c.terminate()]);
    p.snapshots.failLoads = true;

    const result = await p.useCases.recover(OWNER, SID);

    expect(result.recover.outcome).toBe('recreated');
    expect(result.record.view).toMatchObject({ lifecycle: 'READY' });
    expect(await p.sessions.getById(SID)).toMatchObject({ status: 'idle' });
  });
});
