import { Probes, seedHarness } from '../testing/flow-harness';

const OWNER = 'owner_1';
const SID = 'sesn_f';

describe('session lifecycle flows', () => {
  it('hide another owner’s session behind 404 and send nothing', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1)]);
    for (const attempt of [
      () => h.flows.getSession('owner_2', SID),
      () => h.flows.terminateSession('owner_2', SID),
      () => h.flows.recoverSession('owner_2', SID),
      () => h.flows.setPermissionMode('owner_2', SID, 'always_ask'),
      () => h.flows.submitUserMessage('owner_2', SID, { turn_id: 'turn_1', content: [{ type: 'text', text: 'hi' }] }),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    }
    expect(h.kernel.sent).toEqual([]);
  });

  it('send a message that starts a turn and answer with the running session', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1)]);
    const answer = await h.flows.submitUserMessage(OWNER, SID, { turn_id: 'turn_1', content: [{ type: 'text', text: 'hi' }] });
    expect(answer.view).toMatchObject({ status: 'running', turn: { id: 'turn_1' } });
    expect(h.kernel.sent.map((c) => c.type)).toEqual(['SubmitUserMessage']);
  });

  it('recover a sandbox whose lease is past before sending the message to it', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1, '2025-12-31T23:00:00')]);
    h.prober.answer = Probes.gone;
    const answer = await h.flows.submitUserMessage(OWNER, SID, { turn_id: 'turn_1', content: [{ type: 'text', text: 'hi' }] });
    await h.background.settled();
    expect(h.kernel.sent.map((c) => c.type)).toEqual(['RecoverSession', 'SubmitUserMessage']);
    expect(h.startup.starts).toMatchObject([{ generation: 2, reason: 'recover' }]);
    expect(answer.view).toMatchObject({ status: 'running', runtime_unavailable: true, turn: { id: 'turn_1' } });
  });

  it('send a message to a live lease without recovering', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1, '2026-01-01T01:00:00Z')]);
    await h.flows.submitUserMessage(OWNER, SID, { turn_id: 'turn_1', content: [{ type: 'text', text: 'hi' }] });
    expect(h.kernel.sent.map((c) => c.type)).toEqual(['SubmitUserMessage']);
    expect(h.prober.calls).toEqual([]);
  });

  it('set the permission mode, refusing a session still being created before sending anything', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create()]);
    await expect(h.flows.setPermissionMode(OWNER, SID, 'always_ask')).rejects.toMatchObject({ status: 409, code: 'SESSION_BUSY' });
    expect(h.kernel.sent).toEqual([]);
    await h.given(SID, (c) => [c.bind(1)]);
    expect((await h.flows.setPermissionMode(OWNER, SID, 'always_ask')).view.permission_mode).toBe('always_ask');
  });

  it('archive a session, refusing a TERMINATED one', async () => {
    const h = seedHarness();
    await h.given(SID, (c) => [c.create(), c.bind(1)]);
    expect(await h.flows.archiveSession(OWNER, SID)).toEqual({ session_id: SID, archived: true });
    expect((await h.sessions.getById(SID))?.archived_at).not.toBeNull();
    await h.given('sesn_g', (c) => [c.create(), c.bind(1), c.terminate()]);
    await expect(h.flows.archiveSession(OWNER, 'sesn_g')).rejects.toMatchObject({ status: 409, code: 'AGENT_RUNTIME_ERROR' });
  });

  it('create without an idempotency key makes a new session each time', async () => {
    const h = seedHarness();
    const input = { owner_id: OWNER, agent: { id: 'agent_1', version: 1 }, environment_id: 'env_1', harness: 'codex' as const };
    const a = await h.flows.createSession(input);
    const b = await h.flows.createSession(input);
    expect(a.session_id).not.toBe(b.session_id);
    expect([a.created, b.created]).toEqual([true, true]);
  });
});
