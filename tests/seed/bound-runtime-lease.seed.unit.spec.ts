// Seed: BoundRuntimeLeaseExpiredTests (see docs/seed-map.md). Pins boundLeaseExpired, and where it
// acts: SessionUseCases.sendEvents recovers a session whose lease is past before the message.
import { boundLeaseExpired } from '@berth/session-domain';
import { OWNER, Probes, seedPlatform } from './support/seed-platform';

const now = new Date('2026-01-01T00:00:00.000Z');
const expired = (binding: { sandbox_id?: string | null; expires_at?: string | null }) => boundLeaseExpired(binding, now);

describe('BoundRuntimeLeaseExpiredTests', () => {
  it('missing sandbox id is never expired', () => {
    expect(expired({ expires_at: '2000-01-01T00:00:00+00:00' })).toBe(false);
  });

  it('bound sandbox with missing expiry is never expired', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: null })).toBe(false);
  });

  it('bound sandbox with empty expiry is never expired', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: '' })).toBe(false);
  });

  it('unparseable expiry is never expired', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: 'not-a-date' })).toBe(false);
  });

  it('past expiry is expired', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: '2000-01-01T00:00:00+00:00' })).toBe(true);
  });

  it('future expiry is not expired', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: '2099-01-01T00:00:00+00:00' })).toBe(false);
  });

  it('naive past expiry is expired (read as UTC)', () => {
    expect(expired({ sandbox_id: 'sbx-1', expires_at: '2000-01-01T00:00:00' })).toBe(true);
  });
});

describe('a user message to a sandbox whose lease is past (SessionUseCases.sendEvents)', () => {
  const hello = [{ type: 'user.message' as const, content: [{ type: 'text' as const, text: 'hi' }] }];

  it('recovers the session first, so the message queues for the new sandbox', async () => {
    const p = seedPlatform();
    await p.given('sesn_l', (c) => [c.create(), c.bind(1, '2025-12-31T23:00:00')]);
    p.probe.answer = Probes.gone;

    const [echo] = await p.useCases.sendEvents(OWNER, 'sesn_l', hello);

    expect(p.probe.calls).toEqual([{ sessionId: 'sesn_l', sandbox: { generation: 1, expires_at: '2025-12-31T23:00:00' } }]);
    expect(p.sent.map((c) => c.type)).toEqual(['RecoverSession', 'SubmitUserMessage']);
    expect(p.journal.all('sesn_l').find((e) => e.type === 'SandboxRequested' && e.data.generation === 2)).toMatchObject({ data: { reason: 'recover' } });
    expect(echo).toMatchObject({ type: 'user.message' });
    expect((await p.useCases.find(OWNER, 'sesn_l')).view).toMatchObject({ status: 'running', runtime_unavailable: true });
  });

  it('sends straight to a live lease, and to one with no expiry, without probing', async () => {
    const p = seedPlatform();
    await p.given('sesn_live', (c) => [c.create(), c.bind(1, '2026-01-01T01:00:00Z')]);
    await p.given('sesn_none', (c) => [c.create(), c.bind(1, null)]);

    await p.useCases.sendEvents(OWNER, 'sesn_live', hello);
    await p.useCases.sendEvents(OWNER, 'sesn_none', hello);

    expect(p.sent.map((c) => c.type)).toEqual(['SubmitUserMessage', 'SubmitUserMessage']);
    expect(p.probe.calls).toEqual([]);
  });

  it('hides another owner’s session behind 404 and sends nothing', async () => {
    const p = seedPlatform();
    await p.given('sesn_l', (c) => [c.create(), c.bind(1, '2025-12-31T23:00:00')]);

    await expect(p.useCases.sendEvents('owner_2', 'sesn_l', hello)).rejects.toMatchObject({ status: 404, code: 'SESSION_NOT_FOUND' });
    await expect(p.useCases.recover('owner_2', 'sesn_l')).rejects.toMatchObject({ status: 404 });
    expect(p.sent).toEqual([]);
    expect(p.probe.calls).toEqual([]);
  });
});
