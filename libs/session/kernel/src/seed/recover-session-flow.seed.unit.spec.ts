// Seed: RecoverSessionFlowTests (see docs/seed-map.md).
import { Probes, seedHarness } from '../testing/flow-harness';

const SID = 'sesn_rec';
const OWNER = 'owner_1';

describe('RecoverSessionFlowTests', () => {
  it('reattached needing recovery runs reconcile then returns the session', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1), c.message('turn_rec'), c.transcriptPending('turn_rec')]);
    h.prober.answer = Probes.running;

    const result = await h.flows.recoverSession(OWNER, SID);

    expect(h.prober.calls).toEqual([{ session_id: SID, sandbox: { sandbox_id: 'sbx_1', generation: 1, expires_at: null } }]);
    expect(result.outcome).toBe('reattached');
    // One reconcile pass, keyed on the state after the recover, for the turn whose transcript is pending.
    expect(h.reconciler.calls).toHaveLength(1);
    expect(h.reconciler.calls[0].session_id).toBe(SID);
    expect(h.reconciler.calls[0].state.current_turn).toMatchObject({ id: 'turn_rec', recovery_phase: 'TRANSCRIPT_PENDING' });
    // No sandbox start for a reattach.
    expect(h.background.names).toEqual([]);
    // Exactly one command reached the kernel, and it is the recover.
    expect(h.kernel.sent.map((c) => c.type)).toEqual(['RecoverSession']);
    expect(h.journal.all(SID).at(-1)).toMatchObject({ type: 'SessionRecovered', command_id: h.kernel.sent[0].meta.command_id });
    // The answer is what a read of the session shows.
    expect(result.view).toEqual((await h.flows.getSession(OWNER, SID)).view);
  });

  it('reattached without recovery skips reconcile', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1), c.message('turn_done'), c.complete('turn_done')]);

    const result = await h.flows.recoverSession(OWNER, SID);

    expect(result.outcome).toBe('reattached');
    expect(result.view).toMatchObject({ status: 'idle', stop_reason: { type: 'end_turn' } });
    expect(h.reconciler.calls).toEqual([]);
    expect(h.background.names).toEqual([]);
  });

  it('recreated needing recovery also runs reconcile', async () => {
    const h = seedHarness();
    // A resumable turn (the harness session is known) whose sandbox died mid-turn.
    await h.given(SID, (c) => [c.create(), c.bind(1), c.message('turn_rec'), c.harnessSession('turn_rec', 1, 'hs-1'), c.died(1)]);

    const result = await h.flows.recoverSession(OWNER, SID);
    await h.background.settled();

    expect(result.outcome).toBe('startup-requested');
    // A recreate gets the same read-repair as a reattach.
    expect(h.reconciler.calls).toHaveLength(1);
    expect(h.reconciler.calls[0].state.current_turn).toMatchObject({ id: 'turn_rec', recovery_phase: 'TRANSCRIPT_PENDING' });
    // The new sandbox is started in the background, after the answer.
    expect(h.kernel.sent.map((c) => c.type)).toEqual(['RecoverSession']);
    expect(h.background.names).toHaveLength(1);
    expect(h.background.names[0].endsWith(`recover-startup-worker-${SID}`)).toBe(true);
    expect(h.startup.starts).toEqual([{ session_id: SID, generation: 2, reason: 'recover', command_id: h.kernel.sent[0].meta.command_id }]);
  });

  it('recreated without recovery skips reconcile', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1), c.died(1)]);

    const result = await h.flows.recoverSession(OWNER, SID);
    await h.background.settled();

    expect(result.outcome).toBe('startup-requested');
    expect(h.reconciler.calls).toEqual([]);
    expect(h.kernel.sent).toHaveLength(1);
    expect(h.background.names).toHaveLength(1);
    expect(h.startup.starts).toHaveLength(1);
  });

  it('manual recovery required skips reconcile and starts nothing', async () => {
    const h = seedHarness();
    // A running turn with nothing to resume from, and its sandbox is gone.
    await h.given(SID, (c) => [c.create(), c.bind(1), c.message('turn_rec')]);
    h.prober.answer = Probes.gone;

    const result = await h.flows.recoverSession(OWNER, SID);

    expect(result).toMatchObject({ outcome: 'manual-recovery-required', reason: 'sandbox_missing' });
    expect(h.reconciler.calls).toEqual([]);
    expect(h.kernel.sent).toHaveLength(1);
    expect(h.background.names).toEqual([]);
    expect(h.startup.starts).toEqual([]);
  });

  it('terminated session is accepted for recovery', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1), c.terminate()]);

    const result = await h.flows.recoverSession(OWNER, SID);

    expect(result.outcome).toBe('recreated');
    expect(h.kernel.sent.map((c) => c.type)).toEqual(['RecoverSession']);
    expect(result.view.lifecycle).toBe('READY');
  });

  it('deleted session is rejected before any command', async () => {
    const h = seedHarness();
    const before = await h.given(SID, (c) => [c.create(), c.delete()]);

    await expect(h.flows.recoverSession(OWNER, SID)).rejects.toMatchObject({ status: 409, code: 'AGENT_RUNTIME_ERROR' });
    expect(h.kernel.sent).toEqual([]);
    expect(h.journal.all(SID)).toHaveLength(before);
    expect(h.background.names).toEqual([]);
  });
});
