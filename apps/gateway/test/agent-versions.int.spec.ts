import { call } from './support/api';
import { startGateway, type GatewayHarness } from './support/gateway-harness';

/** A 100,000-character system prompt, different for each version. */
const prompt = (version: number): string => `v${version}: ${'Review every change for correctness first. '.repeat(2_500)}`.slice(0, 100_000);

/**
 * Through the API, on the embedded store: an agent updated 500 times with a 100,000-character
 * system prompt keeps every version readable (the old MongoDB layout stopped accepting updates of
 * such an agent after ~160 versions, with a 500).
 */
describe('an agent with 500 versions of a 100,000-character system prompt', () => {
  let gw: GatewayHarness;
  beforeAll(async () => {
    gw = await startGateway({ turnRunner: false });
  });
  afterAll(() => gw.close());

  it('takes every update, and serves each version, the latest and the version list', async () => {
    const created = await call(gw.url, gw.keyA, 'POST', '/v1/agents', { name: 'reviewer', model: 'claude-sonnet-4-5', system: prompt(1) });
    expect(created.status).toBe(200);
    const id = created.json.id as string;
    for (let v = 2; v <= 500; v++) {
      const updated = await call(gw.url, gw.keyA, 'POST', `/v1/agents/${id}`, { system: prompt(v), version: v - 1 });
      if (updated.status !== 200) throw new Error(`update to version ${v}: ${updated.status} ${updated.text.slice(0, 300)}`);
    }

    const latest = await call(gw.url, gw.keyA, 'GET', `/v1/agents/${id}`);
    expect(latest.json).toMatchObject({ id, version: 500, system: prompt(500) });
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/agents/${id}?version=1`)).json).toMatchObject({ version: 1, system: prompt(1) });
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/agents/${id}?version=317`)).json).toMatchObject({ version: 317, system: prompt(317) });
    const listed: number[] = [];
    for (let page: string | null = null, guard = 0; guard < 20; guard++) {
      const res = await call(gw.url, gw.keyA, 'GET', `/v1/agents/${id}/versions?limit=100${page ? `&page=${encodeURIComponent(page)}` : ''}`);
      expect(res.status).toBe(200);
      listed.push(...(res.json.data as { version: number }[]).map((a) => a.version));
      page = res.json.next_page;
      if (!page) break;
    }
    expect(new Set(listed).size).toBe(500);
    // A stale writer still gets a clear conflict, not a storage error.
    const stale = await call(gw.url, gw.keyA, 'POST', `/v1/agents/${id}`, { system: 'stale', version: 499 });
    expect(stale.status).toBe(409);
    expect(stale.json.error.code).toBe('VERSION_CONFLICT');
  }, 180_000);
});
