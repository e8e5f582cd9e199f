import { randomBytes } from 'node:crypto';
import { randomIds, systemClock } from '@berth/core';
import { AesGcmSecretBox, parseSecretKeys } from '@berth/secrets';
import { vaultMetrics } from '@berth/telemetry';
import { MemoryStore, recordingLogger } from '@berth/testing';
import type { TokenAnswer, TokenRequest } from '@berth/vaults-domain';
import { Registry } from 'prom-client';
import { ResourceWebhooks } from '../../webhooks/delivery/resource-webhooks';
import { VaultsService } from '../vaults.service';
import { CredentialRefresher, REFRESHER_LEASE } from './credential-refresher';
import type { TokenEndpoint } from './http-token-endpoint';

const POLICY = { marginMs: 10 * 60_000, lifetimeShare: 0.2, retryDelaysMs: [1_000] };

/** A token endpoint (the port) that answers what the test says, when it says. */
class GatedEndpoint implements TokenEndpoint {
  readonly requests: TokenRequest[] = [];
  private answer: (a: TokenAnswer) => void = () => undefined;
  private arrived: () => void = () => undefined;

  next(): Promise<void> {
    return new Promise((resolve) => (this.arrived = resolve));
  }

  post(request: TokenRequest): Promise<TokenAnswer> {
    this.requests.push(request);
    this.arrived();
    return new Promise((resolve) => (this.answer = resolve));
  }

  grant(accessToken: string, refreshToken: string): void {
    this.answer({ kind: 'answered', status: 200, contentType: 'application/json', body: JSON.stringify({ access_token: accessToken, token_type: 'Bearer', expires_in: 3600, refresh_token: refreshToken }), truncated: false });
  }
}

/** A memory store, the API's service and a refresher on it, as the gateway composes them. */
function platform() {
  const store = new MemoryStore();
  const box = new AesGcmSecretBox(parseSecretKeys(`k1:${randomBytes(32).toString('base64')}`));
  const webhooks = new ResourceWebhooks({ endpoints: store.webhookEndpoints, now: () => new Date().toISOString() });
  const service = new VaultsService({ vaults: store.vaults, secrets: box, clock: systemClock, ids: randomIds, webhooks, refresh: POLICY, targets: { allowPrivateTargets: true } });
  const endpoint = new GatedEndpoint();
  const registry = new Registry();
  const metrics = vaultMetrics(registry);
  const logged = recordingLogger();
  /** A refresher (each call another gateway's). */
  const refresher = () =>
    new CredentialRefresher({
      vaults: store.vaults,
      leases: store.leases,
      secrets: box,
      endpoint,
      webhooks,
      clock: systemClock,
      log: logged.log,
      metrics,
      options: { policy: POLICY, leaseMs: 5_000, batchSize: 4 },
    });
  return { store, box, service, endpoint, refresher, logged, registry };
}

async function dueCredential(p: ReturnType<typeof platform>) {
  const vault = await p.service.create('owner_a', { display_name: 'v' });
  const credential = await p.service.createCredential('owner_a', vault.id, {
    auth: {
      type: 'mcp_oauth',
      mcp_server_url: 'https://mcp.example.com/mcp',
      access_token: 'at_given',
      expires_at: new Date(Date.now() + 5 * 60_000).toISOString(),
      refresh: { token_endpoint: 'https://auth.example.com/token', client_id: 'c', refresh_token: 'rt_given', token_endpoint_auth: { type: 'none' } },
    },
  });
  return { vaultId: vault.id, id: credential.id };
}

const openedToken = async (p: ReturnType<typeof platform>, vaultId: string, id: string) => {
  const stored = await p.store.vaults.getCredential('owner_a', vaultId, id);
  return stored ? JSON.parse(p.box.open(stored.secret, id)).value : null;
};

describe('the credential refresher', () => {
  it("keeps a user's new access token sent during the exchange: what the exchange got is not written over it", async () => {
    const p = platform();
    const { vaultId, id } = await dueCredential(p);
    const arrived = p.endpoint.next();
    const tick = p.refresher().tick();
    await arrived;
    await p.service.updateCredential('owner_a', vaultId, id, { auth: { type: 'mcp_oauth', access_token: 'at_user', expires_at: new Date(Date.now() + 3_600_000).toISOString() } });
    p.endpoint.grant('at_endpoint', 'rt_endpoint');
    expect(await tick).toBe(1);

    expect(await openedToken(p, vaultId, id)).toBe('at_user');
    expect((await p.store.vaults.getCredential('owner_a', vaultId, id))?.refresh?.state).toMatchObject({ status: 'scheduled', last_refreshed_at: null });
    expect(p.logged.lines).toContainEqual(expect.objectContaining({ message: 'a vault credential changed during its refresh; the change is kept' }));
    expect(await p.registry.getSingleMetricAsString('berth_vault_refreshes_total')).toContain('berth_vault_refreshes_total{outcome="superseded"} 1');
  });

  it('keeps both a rename made during the exchange and the tokens it got (the old refresh token may be spent)', async () => {
    const p = platform();
    const { vaultId, id } = await dueCredential(p);
    const arrived = p.endpoint.next();
    const tick = p.refresher().tick();
    await arrived;
    await p.service.updateCredential('owner_a', vaultId, id, { display_name: 'renamed' });
    p.endpoint.grant('at_endpoint', 'rt_endpoint');
    await tick;

    const stored = await p.store.vaults.getCredential('owner_a', vaultId, id);
    expect(stored).toMatchObject({ display_name: 'renamed', version: 2, refresh: { state: { status: 'scheduled' } } });
    expect(await openedToken(p, vaultId, id)).toBe('at_endpoint');
    expect(stored?.refresh && p.box.open(stored.refresh.refresh_token, `${id}:refresh_token`)).toBe('rt_endpoint');
  });

  it('stands by while another refresher holds the lease, and refreshes once it is given up', async () => {
    const p = platform();
    await dueCredential(p);
    await p.store.leases.acquire(REFRESHER_LEASE, 'another-gateway', new Date(), 60_000);
    expect(await p.refresher().tick()).toBe(0);
    expect(p.endpoint.requests).toEqual([]);
    await p.store.leases.release(REFRESHER_LEASE, 'another-gateway');
    const arrived = p.endpoint.next();
    const tick = p.refresher().tick();
    await arrived;
    p.endpoint.grant('at_2', 'rt_2');
    expect(await tick).toBe(1);
  });

  it('fails at once, sending nothing, when the refresh token does not open; refresh_failed is planned in the same write', async () => {
    const p = platform();
    await p.store.webhookEndpoints.insert({
      id: 'whk_1',
      owner_id: 'owner_a',
      url: 'https://hooks.example.com/berth',
      name: '',
      description: '',
      enabled_events: ['vault_credential.refresh_failed'],
      state: 'enabled',
      disabled_reason: '',
      secret: p.box.seal('whsec_x', 'whk_1'),
      consecutive_failures: 0,
      failing_since: null,
      next_retry_at: null,
      version: 1,
      created_at: new Date().toISOString(),
      updated_at: new Date().toISOString(),
    });
    const { vaultId, id } = await dueCredential(p);
    const stored = await p.store.vaults.getCredential('owner_a', vaultId, id);
    if (!stored?.refresh) throw new Error('not stored');
    await p.store.vaults.putCredential({ ...stored, refresh: { ...stored.refresh, refresh_token: { ...stored.refresh.refresh_token, key_id: 'gone' } } });

    expect(await p.refresher().tick()).toBe(1);
    expect(p.endpoint.requests).toEqual([]);
    expect((await p.store.vaults.getCredential('owner_a', vaultId, id))?.refresh?.state).toMatchObject({
      status: 'failed',
      next_attempt_at: null,
      last_error: { kind: 'failed', message: expect.stringMatching(/^the refresh token or client secret does not open/) },
    });
    const planned = await p.store.webhookDeliveries.list('owner_a', 'whk_1', { limit: 10 });
    expect(planned.data.map((d) => [d.event_type, JSON.parse(d.payload).data])).toEqual([
      ['vault_credential.refresh_failed', { type: 'vault_credential.refresh_failed', id, organization_id: 'owner_a', workspace_id: 'default', vault_id: vaultId }],
    ]);
    expect(p.logged.lines).toContainEqual(expect.objectContaining({ level: 'error', fields: expect.objectContaining({ credential_id: id, code: 'SECRET_KEY_UNKNOWN' }) }));
  });
});
