import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { call, seedResources, upload } from './support/api';
import { concretePath, expressRoutes, routeTable, validBody, type OwnedIds } from './support/route-samples';

/**
 * Owner B's key on owner A's ids answers 404 on every route of the route table (read from the
 * running app, so a new route is swept without touching this test), and nothing of A's changes.
 */
describe('owner isolation over the whole route table', () => {
  let gw: GatewayHarness;
  let a: OwnedIds;

  beforeAll(async () => {
    gw = await startGateway();
    a = await seedResources(gw, gw.keyA);
  });
  afterAll(() => gw.close());

  it('sweeps every route Express serves (none is registered outside the route table)', () => {
    const fromTable = routeTable(gw).map((r) => `${r.method} ${r.path.replace(/\{(\w+)\}/g, ':$1')}`);
    expect(expressRoutes(gw)).toEqual([...fromTable].sort());
  });

  it('answers 404 to another owner on every route that names a resource', async () => {
    const routes = routeTable(gw).filter((r) => !r.public);
    const withIds = routes.filter((r) => r.path.includes('{'));
    expect(withIds.length).toBeGreaterThanOrEqual(17);
    const answers: string[] = [];
    for (const route of withIds) {
      const res = await call(gw.url, gw.keyB, route.method, concretePath(route, a), validBody(route, a));
      answers.push(`${route.method} ${route.path} → ${res.status} ${res.json?.error?.type ?? ''}`);
    }
    expect(answers).toEqual(withIds.map((r) => `${r.method} ${r.path} → 404 not_found_error`));
  });

  it('never lists or accepts another owner’s resources on collection routes', async () => {
    const collections = routeTable(gw).filter((r) => !r.public && !r.path.includes('{'));
    for (const route of collections) {
      const res = route.multipart
        ? await upload(gw.url, gw.keyB, 'b.txt', 'b')
        : route.upload
          ? await importOf(a.sessionId)
          : await call(gw.url, gw.keyB, route.method, route.path, validBody(route, a));
      if (route.method === 'GET') {
        expect(res.status).toBe(200);
        for (const id of Object.values(a)) expect(res.text).not.toContain(id);
      } else if (route.upload) {
        // B imports an archive of A's session (A handed it over): a new session of B's, which A does not see.
        expect(res.status).toBe(200);
        expect(res.json.id).not.toBe(a.sessionId);
        expect((await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${res.json.id}`)).status).toBe(404);
        expect((await call(gw.url, gw.keyB, 'GET', `/v1/sessions/${res.json.id}`)).status).toBe(200);
      } else if (route.path === '/v1/sessions') {
        // Creating a session on A's agent and environment: they do not exist for B.
        expect(res.status).toBe(404);
      } else {
        expect(res.status).toBe(200);
      }
    }
    const filtered = await call(gw.url, gw.keyB, 'GET', `/v1/sessions?agent_id=${a.agentId}`);
    expect(filtered.json.data).toEqual([]);
    const files = await call(gw.url, gw.keyB, 'GET', `/v1/files?scope_id=${a.sessionId}&ids[]=${a.fileId}`);
    expect(files.json.data).toEqual([]);
  });

  /** B posts to the import route an archive A exported of its session. */
  async function importOf(sessionId: string) {
    const exported = await fetch(`${gw.url}/v1/sessions/${sessionId}/export`, { headers: { 'x-api-key': gw.keyA } });
    expect(exported.status).toBe(200);
    const res = await fetch(`${gw.url}/v1/sessions/import`, { method: 'POST', headers: { 'x-api-key': gw.keyB, 'content-type': 'application/x-tar' }, body: Buffer.from(await exported.arrayBuffer()) });
    return { status: res.status, json: await res.json(), text: '' };
  }

  it('left every resource of A untouched', async () => {
    const session = await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${a.sessionId}`);
    expect(session.status).toBe(200);
    expect(session.json).toMatchObject({ title: null, archived_at: null });
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/agents/${a.agentId}`)).json).toMatchObject({ version: 1, archived_at: null });
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/environments/${a.envId}`)).json).toMatchObject({ name: 'e', archived_at: null });
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/webhooks/${a.webhookId}`)).json).toMatchObject({ name: '', state: 'enabled', enabled_events: ['session.created'] });
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/webhooks/${a.webhookId}/deliveries`)).json.data.map((d: { id: string }) => d.id)).toEqual([a.deliveryId]);
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/vaults/${a.vaultId}`)).json).toMatchObject({ display_name: 'v', archived_at: null });
    const credential = await gw.store.vaults.getCredential('owner_a', a.vaultId, a.credentialId);
    if (!credential) throw new Error('A lost its credential');
    expect(credential).toMatchObject({ archived_at: null, display_name: null });
    expect(JSON.parse(gw.secrets.open(credential.secret, a.credentialId))).toEqual({ value: 'tok_seed' });
    const events = await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${a.sessionId}/events`);
    expect(events.json.data.some((e: { type: string }) => e.type === 'user.message')).toBe(false);
  });
});
