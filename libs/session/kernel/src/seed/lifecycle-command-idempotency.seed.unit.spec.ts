// Seed: LifecycleCommandIdempotencyTests (see docs/seed-map.md).
import { seedHarness } from '../testing/flow-harness';

const OWNER = 'owner_1';

describe('LifecycleCommandIdempotencyTests', () => {
  it('terminate answers the default result and runs no reconcile pass', async () => {
    const h = seedHarness();
    // The sandbox already died: there is nothing to release, so the answer is the plain default.
    await h.given('sesn_t', (c) => [c.create(), c.bind(1), c.died(1)]);

    const result = await h.flows.terminateSession(OWNER, 'sesn_t');

    expect(result).toEqual({ session_id: 'sesn_t', status: 'terminated' });
    expect(h.reconciler.calls).toEqual([]);
    expect(h.kernel.sent.map((c) => c.type)).toEqual(['TerminateSession']);
  });

  it('terminate of a terminated session is idempotent', async () => {
    const h = seedHarness();
    const before = await h.given('sesn_t', (c) => [c.create(), c.bind(1), c.terminate()]);

    const first = await h.flows.terminateSession(OWNER, 'sesn_t');
    const second = await h.flows.terminateSession(OWNER, 'sesn_t');

    expect(first).toEqual({ session_id: 'sesn_t', status: 'terminated' });
    expect(second).toEqual(first);
    // Two independent commands (no client-side dedupe); idempotency is in the outcome.
    expect(h.kernel.sent).toHaveLength(2);
    expect(h.kernel.sent[0].meta.command_id).not.toBe(h.kernel.sent[1].meta.command_id);
    expect(h.journal.all('sesn_t')).toHaveLength(before);
  });

  it('what the command released overrides the default result, in a fresh object', async () => {
    const h = seedHarness();
    await h.given('sesn_t', (c) => [c.create(), c.bind(1)]);

    const result = await h.flows.terminateSession(OWNER, 'sesn_t');

    expect(result).toEqual({ session_id: 'sesn_t', status: 'terminated', released_sandbox_id: 'sbx_1' });
    (result as { status: string }).status = 'tampered';
    expect(await h.flows.terminateSession(OWNER, 'sesn_t')).toEqual({ session_id: 'sesn_t', status: 'terminated' });
  });

  it('delete of a deleted session is idempotent', async () => {
    const h = seedHarness();
    const before = await h.given('sesn_d', (c) => [c.create(), c.delete()]);

    const first = await h.flows.deleteSession(OWNER, 'sesn_d');
    const second = await h.flows.deleteSession(OWNER, 'sesn_d');

    expect(first).toEqual({ session_id: 'sesn_d', deleted: true });
    expect(second).toEqual(first);
    expect(h.journal.all('sesn_d')).toHaveLength(before);
    // Ownership is checked before anything is sent: another owner sees 404.
    await expect(h.flows.deleteSession('owner_2', 'sesn_d')).rejects.toMatchObject({ status: 404 });
    expect(h.kernel.sent).toHaveLength(2);
  });

  it('archive of a deleted session is rejected', async () => {
    const h = seedHarness();
    const before = await h.given('sesn_a', (c) => [c.create(), c.delete()]);

    await expect(h.flows.archiveSession(OWNER, 'sesn_a')).rejects.toMatchObject({ status: 409 });
    expect(h.kernel.sent).toEqual([]);
    expect(h.journal.all('sesn_a')).toHaveLength(before);
  });

  it('end conversation answers the default result and runs no reconcile pass', async () => {
    const h = seedHarness();
    await h.given('sesn_e', (c) => [c.create(), c.bind(1)]);

    const result = await h.flows.endConversation(OWNER, 'sesn_e');

    expect(result).toEqual({ session_id: 'sesn_e', status: 'conversation-ended' });
    expect(h.reconciler.calls).toEqual([]);
    expect(h.kernel.sent.map((c) => c.type)).toEqual(['EndConversation']);
    expect(h.journal.all('sesn_e').at(-1)?.type).toBe('ConversationEnded');
  });
});
