// Seed: RecoverSessionFlowTests (see docs/seed-map.md). Pins SessionUseCases.recover; the seed's
// "reconcile pass" is the turn-reconciler's workflow (turnReconciler) reacting to the recover's events.
import { OWNER, Probes, seedPlatform } from './support/seed-platform';

const SID = 'sesn_rec';

const probesTurn = (turnId: string) => expect.arrayContaining([expect.objectContaining({ kind: 'effect', effect: 'probe', session_id: SID, turn_id: turnId })]);

describe('RecoverSessionFlowTests', () => {
  it('reattached needing recovery runs reconcile then returns the session', async () => {
    const p = seedPlatform();
    await p.given(SID, (c) => [c.create(), c.bind(1), c.message('turn_rec'), c.transcriptPending('turn_rec')]);
    p.probe.answer = Probes.running;

    const result = await p.useCases.recover(OWNER, SID);

    expect(p.probe.calls).toEqual([{ sessionId: SID, sandbox: { generation: 1, expires_at: null } }]);
    expect(result.recover).toEqual({ outcome: 'reattached', reason: null, already_requested: false });
    // Exactly one command reached the kernel, and it is the recover.
    expect(p.sent.map((c) => c.type)).toEqual(['RecoverSession']);
    expect(p.journal.all(SID).at(-1)).toMatchObject({ type: 'SessionRecovered', command_id: p.sent[0].meta.command_id });
    // The turn still waits for its transcript, and the reconciler's next sweep works on it; no sandbox start.
    expect(result.record.view).toMatchObject({ status: 'rescheduling', turn: { id: 'turn_rec', recovery_phase: 'TRANSCRIPT_PENDING' } });
    expect(p.reconcilerAfter(SID)).toEqual(probesTurn('turn_rec'));
    expect(p.journal.all(SID).filter((e) => e.type === 'SandboxRequested')).toHaveLength(1);
    // The answer is what a read of the session shows.
    expect(result.record).toEqual(await p.useCases.find(OWNER, SID));
  });

  it('reattached without recovery skips reconcile', async () => {
    const p = seedPlatform();
    await p.given(SID, (c) => [c.create(), c.bind(1), c.message('turn_done'), c.complete('turn_done')]);

    const result = await p.useCases.recover(OWNER, SID);

    expect(result.recover.outcome).toBe('reattached');
    expect(result.record.view).toMatchObject({ status: 'idle', stop_reason: { type: 'end_turn' } });
    expect(p.reconcilerAfter(SID)).toEqual([]);
    expect(p.journal.all(SID).filter((e) => e.type === 'SandboxRequested')).toHaveLength(1);
  });

  it('recreated needing recovery also runs reconcile', async () => {
    const p = seedPlatform();
    // A resumable turn (the harness session is known) whose sandbox died mid-turn.
    await p.given(SID, (c) => [c.create(), c.bind(1), c.message('turn_rec'), c.harnessSession('turn_rec', 1, 'hs-1'), c.died(1)]);

    const result = await p.useCases.recover(OWNER, SID);

    expect(result.recover.outcome).toBe('startup-requested');
    expect(p.sent.map((c) => c.type)).toEqual(['RecoverSession']);
    // The new sandbox is requested by the recover itself (the sandbox-manager starts it after the answer).
    expect(p.journal.all(SID).filter((e) => e.command_id === p.sent[0].meta.command_id).map((e) => e.type)).toContain('SandboxRequested');
    expect(p.journal.all(SID).at(-1)).toMatchObject({ type: 'SandboxRequested', data: { generation: 2, reason: 'recover' } });
    // A recreate gets the same reconcile as a reattach.
    expect(result.record.view).toMatchObject({ turn: { id: 'turn_rec', recovery_phase: 'TRANSCRIPT_PENDING' } });
    expect(p.reconcilerAfter(SID)).toEqual(probesTurn('turn_rec'));
  });

  it('recreated without recovery skips reconcile', async () => {
    const p = seedPlatform();
    await p.given(SID, (c) => [c.create(), c.bind(1), c.died(1)]);

    const result = await p.useCases.recover(OWNER, SID);

    expect(result.recover.outcome).toBe('startup-requested');
    expect(p.sent).toHaveLength(1);
    expect(p.journal.all(SID).at(-1)).toMatchObject({ type: 'SandboxRequested', data: { generation: 2, reason: 'recover' } });
    expect(p.reconcilerAfter(SID)).toEqual([]);
  });

  it('manual recovery required skips reconcile and starts nothing', async () => {
    const p = seedPlatform();
    // A running turn with nothing to resume from, and its sandbox is gone.
    const before = await p.given(SID, (c) => [c.create(), c.bind(1), c.message('turn_rec')]);
    p.probe.answer = Probes.gone;
    const sweepBefore = p.reconcilerAfter(SID);

    const result = await p.useCases.recover(OWNER, SID);

    expect(result.recover).toMatchObject({ outcome: 'manual-recovery-required', reason: 'sandbox_missing' });
    expect(p.sent).toHaveLength(1);
    expect(p.journal.all(SID).slice(before).map((e) => e.type)).not.toContain('SandboxRequested');
    // The manual outcome gives the reconciler nothing new: its sweep is what it was before the recover
    // (it keeps probing the open turn and fails it with a named reason once the sandbox stays gone).
    expect(p.reconcilerAfter(SID)).toEqual(sweepBefore);
  });

  it('terminated session is accepted for recovery', async () => {
    const p = seedPlatform();
    await p.given(SID, (c) => [c.create(), c.bind(1), c.terminate()]);

    const result = await p.useCases.recover(OWNER, SID);

    expect(result.recover.outcome).toBe('recreated');
    expect(p.sent.map((c) => c.type)).toEqual(['RecoverSession']);
    expect(result.record.view).toMatchObject({ lifecycle: 'READY' });
  });

  it('deleted session is rejected before any command', async () => {
    const p = seedPlatform();
    const before = await p.given(SID, (c) => [c.create(), c.delete()]);

    await expect(p.useCases.recover(OWNER, SID)).rejects.toMatchObject({ status: 404, code: 'SESSION_NOT_FOUND' });
    expect(p.probe.calls).toEqual([]);
    expect(p.sent).toEqual([]);
    expect(p.journal.all(SID)).toHaveLength(before);
  });
});
