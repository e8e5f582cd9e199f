import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { call } from './support/api';
import { routeTable } from './support/route-samples';

describe('API-key authentication', () => {
  let gw: GatewayHarness;
  beforeAll(async () => {
    gw = await startGateway({ turnRunner: false });
  });
  afterAll(() => gw.close());

  it('answers 401 without a key on every non-public route', async () => {
    for (const route of routeTable(gw).filter((r) => !r.public)) {
      const res = await call(gw.url, null, route.method, route.path.replace(/\{\w+\}/g, 'x_1'));
      expect({ route: route.path, status: res.status, type: res.json?.error?.type }).toEqual({ route: route.path, status: 401, type: 'authentication_error' });
    }
  });

  it('rejects malformed, unknown and tampered keys', async () => {
    const tampered = gw.keyA.slice(0, -1) + (gw.keyA.endsWith('a') ? 'b' : 'a');
    for (const key of ['nope', 'bk_short_x', 'bk_aaaaaaaaaaaa_' + 'A'.repeat(32), tampered]) {
      const res = await call(gw.url, key, 'GET', '/v1/agents');
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe('UNAUTHENTICATED');
    }
  });

  it('accepts x-api-key and Authorization: Bearer, and ignores anthropic-* headers and ?beta=true', async () => {
    expect((await call(gw.url, gw.keyA, 'GET', '/v1/agents?beta=true', undefined, { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'managed-agents-2026-04-01' })).status).toBe(200);
    expect((await call(gw.url, null, 'GET', '/v1/agents', undefined, { authorization: `Bearer ${gw.keyA}` })).status).toBe(200);
    expect((await call(gw.url, null, 'GET', '/v1/agents', undefined, { authorization: `Basic ${gw.keyA}` })).status).toBe(401);
  });

  it('stores keys hashed: the secret never appears in the store', async () => {
    const secret = gw.keyA.split('_')[2];
    const record = await gw.store.apiKeys.byPrefix(gw.keyA.split('_').slice(0, 2).join('_'));
    expect(record).not.toBeNull();
    expect(JSON.stringify(record)).not.toContain(secret);
  });

  it('serves health and the OpenAPI document without a key', async () => {
    expect((await call(gw.url, null, 'GET', '/healthz')).json).toEqual({ status: 'ok' });
    expect((await call(gw.url, null, 'GET', '/readyz')).json).toEqual({ status: 'ready', checks: { store: 'ok' } });
    const doc = await call(gw.url, null, 'GET', '/openapi.json');
    expect(doc.json.openapi).toBe('3.1.0');
    for (const route of routeTable(gw)) expect(doc.json.paths[route.path][route.method.toLowerCase()]).toBeDefined();
    expect(doc.json.paths['/v1/sessions'].post.requestBody.content['application/json'].schema.required).toEqual(expect.arrayContaining(['agent', 'environment_id']));
  });
});
