// Seed: LifecycleCommandIdempotencyTests (see docs/seed-map.md). Pins SessionUseCases.terminate,
// .delete, .archive and .endConversation.
import { OWNER, seedPlatform } from './support/seed-platform';

describe('LifecycleCommandIdempotencyTests', () => {
  it('terminate answers the default result and runs no reconcile pass', async () => {
    const p = seedPlatform();
    // The sandbox already died: there is nothing to release, so the answer is the plain default.
    await p.given('sesn_t', (c) => [c.create(), c.bind(1), c.died(1)]);

    const result = await p.useCases.terminate(OWNER, 'sesn_t');

    expect(result).toMatchObject({ id: 'sesn_t', status: 'terminated', view: { sandbox: null } });
    expect(p.journal.all('sesn_t').at(-1)).toMatchObject({ type: 'SessionTerminated', data: { sandbox_id: null } });
    expect(p.sent.map((c) => c.type)).toEqual(['TerminateSession']);
    expect(p.reconcilerAfter('sesn_t')).toEqual([]);
  });

  it('terminate of a terminated session is idempotent', async () => {
    const p = seedPlatform();
    const before = await p.given('sesn_t', (c) => [c.create(), c.bind(1), c.terminate()]);

    const first = await p.useCases.terminate(OWNER, 'sesn_t');
    const second = await p.useCases.terminate(OWNER, 'sesn_t');

    expect(first).toMatchObject({ id: 'sesn_t', status: 'terminated' });
    expect(second).toEqual(first);
    // Two independent commands (no client-side dedupe); idempotency is in the outcome.
    expect(p.sent).toHaveLength(2);
    expect(p.sent[0].meta.command_id).not.toBe(p.sent[1].meta.command_id);
    expect(p.journal.all('sesn_t')).toHaveLength(before);
  });

  it('what the command released overrides the default result', async () => {
    const p = seedPlatform();
    await p.given('sesn_t', (c) => [c.create(), c.bind(1)]);

    const result = await p.useCases.terminate(OWNER, 'sesn_t');

    // The released sandbox is recorded with the termination; the answer is the session after it.
    expect(p.journal.all('sesn_t').at(-1)).toMatchObject({ type: 'SessionTerminated', data: { sandbox_id: 'sbx_1' } });
    expect(result).toMatchObject({ status: 'terminated', view: { lifecycle: 'TERMINATED', sandbox: null } });
    expect(await p.useCases.terminate(OWNER, 'sesn_t')).toEqual(result);
  });

  it('delete of a deleted session is idempotent', async () => {
    const p = seedPlatform();
    await p.given('sesn_d', (c) => [c.create()]);

    await p.useCases.delete(OWNER, 'sesn_d');
    const after = p.journal.all('sesn_d').length;
    // Deleted is gone for its owner too: a second delete is answered 404 before any command.
    await expect(p.useCases.delete(OWNER, 'sesn_d')).rejects.toMatchObject({ status: 404, code: 'SESSION_NOT_FOUND' });
    expect(p.journal.all('sesn_d')).toHaveLength(after);
    // Ownership is checked before anything is sent: another owner sees 404.
    await expect(p.useCases.delete('owner_2', 'sesn_d')).rejects.toMatchObject({ status: 404 });
    expect(p.sent.map((c) => c.type)).toEqual(['DeleteSession']);
    // The kernel itself answers a repeated delete as a no-op.
    const again = await p.kernel.execute({ ...p.sent[0], meta: { ...p.sent[0].meta, command_id: 'cmd_again' } });
    expect(again).toMatchObject({ ok: true, events: [] });
  });

  it('archive of a deleted session is rejected', async () => {
    const p = seedPlatform();
    const before = await p.given('sesn_a', (c) => [c.create(), c.delete()]);

    await expect(p.useCases.archive(OWNER, 'sesn_a')).rejects.toMatchObject({ status: 404, code: 'SESSION_NOT_FOUND' });
    expect(p.sent).toEqual([]);
    expect(p.journal.all('sesn_a')).toHaveLength(before);
  });

  it('end conversation answers the default result and runs no reconcile pass', async () => {
    const p = seedPlatform();
    await p.given('sesn_e', (c) => [c.create(), c.bind(1)]);

    const result = await p.useCases.endConversation(OWNER, 'sesn_e');

    expect(result).toMatchObject({ id: 'sesn_e', status: 'idle', view: { lifecycle: 'READY' } });
    expect(p.sent.map((c) => c.type)).toEqual(['EndConversation']);
    expect(p.journal.all('sesn_e').at(-1)?.type).toBe('ConversationEnded');
    expect(p.reconcilerAfter('sesn_e')).toEqual([]);
  });
});
