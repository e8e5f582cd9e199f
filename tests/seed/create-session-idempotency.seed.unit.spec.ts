// Seed: CreateSessionIdempotencyTests (see docs/seed-map.md). Pins SessionUseCases.create.
import { commandsFor } from '@berth/session-kernel/testing';
import type { CreateSessionInput } from '@berth/session-use-cases';
import { OWNER, seedPlatform } from './support/seed-platform';

const input = (over: { owner?: string; agent_id?: string } = {}): CreateSessionInput => ({
  owner: over.owner ?? OWNER,
  agent: { id: over.agent_id ?? 'agent_1', version: 1 },
  environment_id: 'env_1',
  harness: 'claude-code',
  permission_mode: 'always_allow',
  title: null,
  metadata: {},
  initial_messages: [],
  idempotency_key: 'browser-create-1',
});

describe('CreateSessionIdempotencyTests', () => {
  it('same create key returns the existing conversation without a second command', async () => {
    const p = seedPlatform();
    const first = await p.useCases.create(input());
    expect(first.view).toMatchObject({ lifecycle: 'CREATING', status: 'idle' });
    // The seed's two worker wakeups: one command, whose SandboxRequested is what starts the sandbox
    // (the sandbox-manager reacts to it).
    expect(p.sent.map((c) => c.type)).toEqual(['CreateSession']);
    expect(p.journal.all(first.id).map((e) => [e.type, e.command_id])).toEqual([
      ['SessionCreated', p.sent[0].meta.command_id],
      ['SandboxRequested', p.sent[0].meta.command_id],
    ]);
    const commitsAfterFirst = p.journal.commits.length;

    const retry = await p.useCases.create(input());
    expect(retry.id).toBe(first.id);
    expect(retry).toEqual(await p.useCases.find(OWNER, first.id));
    expect(p.sent).toHaveLength(1);
    expect(p.journal.commits).toHaveLength(commitsAfterFirst);
  });

  it('same create key is scoped to user and subject', async () => {
    const p = seedPlatform();
    const first = await p.useCases.create(input());
    p.forget();

    // Same owner and key for another subject (agent): a conflict, and nothing is sent.
    await expect(p.useCases.create(input({ agent_id: 'agent_2' }))).rejects.toMatchObject({ code: 'IDEMPOTENCY_KEY_CONFLICT', status: 409 });
    expect(p.sent).toEqual([]);

    // A session at that id owned by someone else (the seed's existing row): the kernel refuses too.
    const foreign = commandsFor(first.id, 'someone-else').create({ idempotency_key: 'browser-create-1' });
    await expect(p.kernel.execute(foreign)).resolves.toMatchObject({ ok: false, error: { code: 'IDEMPOTENCY_KEY_CONFLICT', status: 409 } });

    // Another owner's identical key is another session entirely.
    const other = await p.useCases.create(input({ owner: 'owner_2' }));
    expect(other.id).not.toBe(first.id);
    expect(other.owner_id).toBe('owner_2');
    expect(p.sent.map((c) => c.type)).toEqual(['CreateSession']);
  });
});
