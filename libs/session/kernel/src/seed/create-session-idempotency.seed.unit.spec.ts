// Seed: CreateSessionIdempotencyTests (see docs/seed-map.md).
import { sessionIdForIdempotencyKey } from '../flows/session-ids';
import { commandsFor } from '../testing';
import { seedHarness } from '../testing/flow-harness';

const input = (over: { owner_id?: string; agent_id?: string } = {}) => ({
  owner_id: over.owner_id ?? 'owner_1',
  agent: { id: over.agent_id ?? 'agent_1', version: 1 },
  environment_id: 'env_1',
  harness: 'claude-code' as const,
  idempotency_key: 'browser-create-1',
});

describe('CreateSessionIdempotencyTests', () => {
  it('same create key returns the existing conversation without a second command', async () => {
    const h = seedHarness();
    const first = await h.flows.createSession(input());
    await h.background.settled();
    expect(first).toMatchObject({ created: true, view: { lifecycle: 'CREATING', status: 'idle' } });
    // One command and one sandbox start: the seed's two worker wakeups.
    expect(h.kernel.sent.map((c) => c.type)).toEqual(['CreateSession']);
    expect(h.background.names).toEqual([`create-startup-worker-${first.session_id}`]);
    expect(h.startup.starts).toEqual([{ session_id: first.session_id, generation: 1, reason: 'startup', command_id: h.kernel.sent[0].meta.command_id }]);
    const commitsAfterFirst = h.journal.commits.length;

    const retry = await h.flows.createSession(input());
    expect(retry).toMatchObject({ session_id: first.session_id, created: false });
    expect(h.kernel.sent).toHaveLength(1);
    expect(h.background.names).toHaveLength(1);
    expect(h.journal.commits).toHaveLength(commitsAfterFirst);
  });

  it('same create key is scoped to user and subject', async () => {
    const h = seedHarness();
    const first = await h.flows.createSession(input());
    h.kernel.sent.length = 0;
    h.background.names.length = 0;

    // Same owner and key for another subject (agent): a conflict, and nothing is sent or started.
    await expect(h.flows.createSession(input({ agent_id: 'agent_2' }))).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_CONFLICT', status: 409 });
    expect(h.kernel.sent).toEqual([]);
    expect(h.background.names).toEqual([]);

    // A session at that id owned by someone else (the seed's existing row): the kernel refuses too.
    const foreign = commandsFor(first.session_id, 'someone-else').create({ idempotency_key: 'browser-create-1' });
    await expect(h.kernel.execute(foreign)).resolves.toMatchObject({ ok: false, error: { code: 'IDEMPOTENCY_KEY_CONFLICT', status: 409 } });

    // Another owner's identical key is another session entirely.
    const other = await h.flows.createSession(input({ owner_id: 'owner_2' }));
    expect(other.session_id).toBe(sessionIdForIdempotencyKey('owner_2', 'browser-create-1'));
    expect(other.session_id).not.toBe(first.session_id);
    expect(other.created).toBe(true);
  });
});
