import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { call, seedSession, userMessage } from './support/api';
import { waitFor } from './support/wait-for';

describe('sessions beyond the reference API', () => {
  let gw: GatewayHarness;
  beforeAll(async () => {
    gw = await startGateway({ gateway: { commandTimeoutMs: 300 } });
  });
  afterAll(() => gw.close());

  it('Idempotency-Key: same key and agent → same session and no second command; other agent → 409; scoped per owner', async () => {
    const { agentId, envId } = await seedSession(gw.url, gw.keyA);
    const other = await call(gw.url, gw.keyA, 'POST', '/v1/agents', { name: 'other', model: 'm' });
    const create = (key: string, agent: string, apiKey = gw.keyA, environment_id = envId) =>
      call(gw.url, apiKey, 'POST', '/v1/sessions', { agent, environment_id }, { 'idempotency-key': key });

    const first = await create('k-1', agentId);
    expect(first.status).toBe(200);
    const creates = () => gw.bus.sent.filter((c) => c.type === 'CreateSession').length;
    const createsBefore = creates();
    const again = await create('k-1', agentId);
    expect(again.json.id).toBe(first.json.id);
    expect(creates()).toBe(createsBefore);

    const conflict = await create('k-1', other.json.id);
    expect(conflict.status).toBe(409);
    expect(conflict.json.error).toMatchObject({ type: 'conflict_error', code: 'IDEMPOTENCY_KEY_CONFLICT' });

    const b = await seedSession(gw.url, gw.keyB);
    const bSession = await create('k-1', b.agentId, gw.keyB, b.envId);
    expect(bSession.status).toBe(200);
    expect(bSession.json.id).not.toBe(first.json.id);
  });

  it('concurrent creates with one key make one session', async () => {
    const { agentId, envId } = await seedSession(gw.url, gw.keyA);
    const results = await Promise.all(
      [1, 2, 3].map(() => call(gw.url, gw.keyA, 'POST', '/v1/sessions', { agent: agentId, environment_id: envId }, { 'idempotency-key': 'race' })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(results.map((r) => r.json.id)).size).toBe(1);
    const listed = await call(gw.url, gw.keyA, 'GET', `/v1/sessions?agent_id=${agentId}`);
    expect(listed.json.data.filter((s: { id: string }) => s.id === results[0].json.id)).toHaveLength(1);
  });

  it('maps a kernel refusal to its status and code', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    await call(gw.url, gw.keyA, 'DELETE', `/v1/sessions/${sessionId}`);
    expect((await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('late'))).status).toBe(404);

    const { sessionId: s2 } = await seedSession(gw.url, gw.keyA);
    const confirm = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${s2}/events`, { events: [{ type: 'user.tool_confirmation', tool_use_id: 'sevt_nothing_0', result: 'allow' }] });
    expect(confirm.status).toBe(409);
    expect(confirm.json.error).toMatchObject({ type: 'conflict_error', code: 'TOOL_USE_NOT_PENDING', details: { tool_use_id: 'sevt_nothing_0' } });
  });

  it('answers 504 TIMEOUT when the kernel does not answer in time', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    gw.bus.stallWhen = (command) => command.meta.session_id === sessionId && command.type === 'SubmitUserMessage';
    try {
      const res = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('anyone?'));
      expect(res.status).toBe(504);
      expect(res.json.error).toMatchObject({ type: 'timeout_error', code: 'TIMEOUT' });
    } finally {
      gw.bus.stallWhen = () => false;
    }
  });

  it('recover and terminate go through the kernel and return the session', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    await waitFor(async () => (await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events?types[]=berth.sandbox_bound`)).json.data.length === 1);
    const terminated = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/terminate`);
    expect(terminated.status).toBe(200);
    expect(terminated.json).toMatchObject({ type: 'session', id: sessionId });
    const recovered = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/recover`);
    expect(recovered.status).toBe(200);
    expect(recovered.json.berth).toMatchObject({ lifecycle: 'READY', recover: { outcome: 'recreated', reason: null, already_requested: false } });
    const types = (await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events`)).json.data.map((e: { type: string }) => e.type);
    expect(types).toEqual(expect.arrayContaining(['session.status_terminated', 'berth.session_recovered']));
  });

  it('pages events with cursors in either order and refuses a cursor reused with another order', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('page me'));
    await waitFor(async () => (await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}`)).json.status === 'idle' && (await gw.store.journal.lastSeq(sessionId)) > 5);
    const all = (await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events?limit=1000`)).json.data;
    const walk = async (order: 'asc' | 'desc') => {
      const ids: string[] = [];
      let page: string | null = null;
      do {
        const res: { json: { data: { id: string }[]; next_page: string | null } } = await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events?limit=2&order=${order}${page ? `&page=${page}` : ''}`);
        ids.push(...res.json.data.map((e) => e.id));
        page = res.json.next_page;
      } while (page);
      return ids;
    };
    expect(await walk('asc')).toEqual(all.map((e: { id: string }) => e.id));
    expect(await walk('desc')).toEqual(all.map((e: { id: string }) => e.id).reverse());
    const firstPage = await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events?limit=1&order=asc`);
    const mismatch = await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events?order=desc&page=${firstPage.json.next_page}`);
    expect(mismatch.status).toBe(400);
  });

  it('refuses a session on an archived agent or environment', async () => {
    const { agentId, envId } = await seedSession(gw.url, gw.keyA);
    await call(gw.url, gw.keyA, 'POST', `/v1/environments/${envId}/archive`);
    const res = await call(gw.url, gw.keyA, 'POST', '/v1/sessions', { agent: agentId, environment_id: envId });
    expect(res.status).toBe(409);
    expect(res.json.error.code).toBe('ENVIRONMENT_ARCHIVED');
  });
});
