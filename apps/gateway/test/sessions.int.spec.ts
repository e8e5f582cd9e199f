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

  it('Idempotency-Key on events: a retry after a lost reply records the message once and answers the same', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    const send = (body: unknown, key: string, apiKey = gw.keyA, session = sessionId) =>
      call(gw.url, apiKey, 'POST', `/v1/sessions/${session}/events`, body, { 'idempotency-key': key });
    const messages = async () => (await gw.store.journal.readEvents(sessionId, { types: ['UserMessageReceived'] })).length;

    gw.bus.loseReplyWhen = (command) => command.meta.session_id === sessionId && command.type === 'SubmitUserMessage';
    let lost;
    try {
      lost = await send(userMessage('once'), 'send-1');
    } finally {
      gw.bus.loseReplyWhen = () => false;
    }
    expect(lost.status).toBe(504);
    expect(await messages()).toBe(1);

    const retry = await send(userMessage('once'), 'send-1');
    const again = await send(userMessage('once'), 'send-1');
    expect([retry.status, again.status]).toEqual([200, 200]);
    const [recorded] = await gw.store.journal.readEvents(sessionId, { types: ['UserMessageReceived'] });
    expect(retry.json.data).toEqual([expect.objectContaining({ type: 'user.message', id: recorded.id })]);
    expect(again.json.data).toEqual(retry.json.data);
    expect(await messages()).toBe(1);

    // The key is bound to the batch: other events under it are a conflict, and nothing is sent.
    const conflict = await send(userMessage('something else'), 'send-1');
    expect(conflict.status).toBe(409);
    expect(conflict.json.error).toMatchObject({ type: 'conflict_error', code: 'IDEMPOTENCY_KEY_CONFLICT' });
    expect(await messages()).toBe(1);

    // Scoped to the session and the owner; without a key every send is new.
    const other = await seedSession(gw.url, gw.keyA);
    expect((await send(userMessage('once'), 'send-1', gw.keyA, other.sessionId)).status).toBe(200);
    expect(await gw.store.journal.readEvents(other.sessionId, { types: ['UserMessageReceived'] })).toHaveLength(1);
    expect((await send(userMessage('once'), 'send-1', gw.keyB)).status).toBe(404);
    await waitFor(async () => (await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}`)).json.status === 'idle');
    await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('once'));
    expect(await messages()).toBe(2);
  });

  it('refuses a user message above the payload limit with 413 PAYLOAD_TOO_LARGE and records nothing', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    const messages = async () => (await gw.store.journal.readEvents(sessionId, { types: ['UserMessageReceived'] })).length;
    const big = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('x'.repeat(600 * 1024)));
    expect(big.status).toBe(413);
    expect(big.json.error).toMatchObject({ type: 'request_too_large', code: 'PAYLOAD_TOO_LARGE', details: { limit_bytes: 512 * 1024 } });
    const huge = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('x'.repeat(1024 * 1024)));
    expect(huge.status).toBe(413);
    expect(huge.json.error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await messages()).toBe(0);
    const fits = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('y'.repeat(500 * 1024)));
    expect(fits.status).toBe(200);
    expect(await messages()).toBe(1);
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

  it('pause releases the sandbox and resume asks for a new one; a terminated session refuses a pause with 409', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    const path = `/v1/sessions/${sessionId}`;
    await waitFor(async () => (await call(gw.url, gw.keyA, 'GET', `${path}/events?types[]=berth.sandbox_bound`)).json.data.length === 1);
    const paused = await call(gw.url, gw.keyA, 'POST', `${path}/pause`);
    expect(paused.status).toBe(200);
    expect(paused.json).toMatchObject({ type: 'session', id: sessionId, status: 'idle', berth: { paused: true, sandbox: null } });
    const resumed = await call(gw.url, gw.keyA, 'POST', `${path}/resume`);
    expect(resumed.json.berth.paused).toBe(false);
    const lifecycle = (await call(gw.url, gw.keyA, 'GET', `${path}/events?types[]=berth.lifecycle`)).json.data;
    expect(lifecycle.map((e: { lifecycle: string }) => e.lifecycle)).toEqual(['paused', 'resumed']);
    expect(lifecycle[0].sandbox_id).toEqual(expect.any(String));
    const requested = (await call(gw.url, gw.keyA, 'GET', `${path}/events?types[]=berth.sandbox_requested`)).json.data;
    expect(requested.at(-1)).toMatchObject({ generation: 2, reason: 'rebuild' });
    await call(gw.url, gw.keyA, 'POST', `${path}/terminate`);
    const refused = await call(gw.url, gw.keyA, 'POST', `${path}/pause`);
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe('AGENT_RUNTIME_ERROR');
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
