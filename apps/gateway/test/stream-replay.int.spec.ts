import { toPublicEvent } from '@berth/contracts';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { call, seedSession, userMessage } from './support/api';
import { openSse, type SseFrame } from './support/sse-client';
import { waitFor } from './support/wait-for';

/** What the client saw, deduplicated by event id, in arrival order. */
const dedupe = (frames: readonly SseFrame[]) => {
  const seen = new Map<string, unknown>();
  for (const f of frames) {
    const event = JSON.parse(f.data) as { id: string };
    if (!seen.has(event.id)) seen.set(event.id, event);
  }
  return [...seen.values()];
};

describe('SSE replay: Last-Event-ID and ?after', () => {
  let gw: GatewayHarness;
  const streamUrl = (id: string, query = '') => `${gw.url}/v1/sessions/${id}/events/stream${query}`;

  beforeAll(async () => {
    gw = await startGateway({ gateway: { heartbeatMs: 50 } });
  });
  afterAll(() => gw.close());

  const journalAsPublic = async (id: string) => (await gw.store.journal.readEvents(id)).map(toPublicEvent);
  const lastSeq = (id: string) => gw.store.journal.lastSeq(id);

  it('a client that drops mid-stream and resumes with Last-Event-ID sees exactly the journal', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    const first = await openSse(streamUrl(sessionId, '?after=0'), { 'x-api-key': gw.keyA });
    expect(first.status).toBe(200);
    await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('one'));
    await waitFor(() => first.frames.some((f) => f.event === 'agent.message'), 5_000, 'first reply');
    first.close();
    await first.ended;
    const cursor = first.frames[first.frames.length - 1].id as string;

    // Activity while disconnected.
    await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('two'));
    await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('three'));
    await waitFor(async () => (await journalAsPublic(sessionId)).filter((e) => e.type === 'agent.message').length === 3, 5_000, 'three replies');

    const second = await openSse(streamUrl(sessionId), { 'x-api-key': gw.keyA, 'last-event-id': cursor });
    const target = String(await lastSeq(sessionId));
    await waitFor(() => second.frames.some((f) => f.id === target), 5_000, 'resumed stream to reach the journal end');
    // Live events keep coming on the resumed connection.
    await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('four'));
    await waitFor(async () => second.frames.length > 0 && second.frames[second.frames.length - 1].id === String(await lastSeq(sessionId)) && second.frames.filter((f) => f.event === 'agent.message').length === 3, 5_000, 'live tail');
    second.close();

    const received = dedupe([...first.frames, ...second.frames]);
    expect(received).toEqual(await journalAsPublic(sessionId));
    // No duplicates across the resume point either: ids strictly increase on each connection.
    for (const frames of [first.frames, second.frames]) {
      const ids = frames.map((f) => Number(f.id));
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
    }
    expect(Number(second.frames[0].id)).toBe(Number(cursor) + 1);
  });

  it('fills gaps from the journal when live deliveries are lost', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    const conn = await openSse(streamUrl(sessionId, '?after=0'), { 'x-api-key': gw.keyA });
    await waitFor(() => conn.frames.length > 0, 5_000, 'replay');
    gw.feed.dropWhen = (e) => e.session_id === sessionId && e.type !== 'TurnCompleted';
    try {
      await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('lossy'));
      await waitFor(() => conn.frames.some((f) => f.event === 'session.status_idle'), 5_000, 'idle after a lossy feed');
    } finally {
      gw.feed.dropWhen = () => false;
    }
    conn.close();
    expect(dedupe(conn.frames)).toEqual(await journalAsPublic(sessionId));
    expect(conn.frames.map((f) => Number(f.id))).toEqual(conn.frames.map((_, i) => i + 1));
  });

  it('without a cursor, streams only new events (the reference behaviour), with heartbeats', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    const before = await lastSeq(sessionId);
    const conn = await openSse(streamUrl(sessionId), { authorization: `Bearer ${gw.keyA}` });
    await waitFor(() => gw.feed.subscriberCount(sessionId) > 0 && conn.comments.length > 0, 5_000, 'subscription and a heartbeat');
    await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${sessionId}/events`, userMessage('new'));
    await waitFor(() => conn.frames.some((f) => f.event === 'session.status_idle'), 5_000, 'turn end');
    conn.close();
    expect(Number(conn.frames[0].id)).toBe(before + 1);
    expect(conn.comments[0]).toBe(': ping');
  });

  it('ends every open stream on session.deleted', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    const conn = await openSse(streamUrl(sessionId, '?after=0'), { 'x-api-key': gw.keyA });
    await call(gw.url, gw.keyA, 'DELETE', `/v1/sessions/${sessionId}`);
    await conn.ended;
    expect(conn.frames[conn.frames.length - 1].event).toBe('session.deleted');
    await waitFor(() => gw.feed.subscriberCount(sessionId) === 0, 2_000, 'unsubscribe');
  });

  it('rejects a malformed cursor with 400 and an unknown session with 404', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    const bad = await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events/stream?after=-1`);
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe('VALIDATION_ERROR');
    const badHeader = await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events/stream`, undefined, { 'last-event-id': 'abc' });
    expect(badHeader.status).toBe(400);
    expect((await call(gw.url, gw.keyA, 'GET', `/v1/sessions/sesn_missing/events/stream`)).status).toBe(404);
  });

  it('answers 503 before streaming when live events are unavailable', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    gw.feed.unavailable = true;
    try {
      const res = await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events/stream?after=0`);
      expect(res.status).toBe(503);
      expect(res.json.error).toMatchObject({ type: 'api_error', code: 'UNAVAILABLE' });
    } finally {
      gw.feed.unavailable = false;
    }
  });

  it('ends open streams on shutdown instead of hanging it', async () => {
    const other = await startGateway({ turnRunner: false });
    const { sessionId } = await seedSession(other.url, other.keyA);
    const conn = await openSse(`${other.url}/v1/sessions/${sessionId}/events/stream?after=0`, { 'x-api-key': other.keyA });
    await waitFor(() => conn.frames.length > 0, 5_000, 'replay');
    await other.close();
    await conn.ended;
    expect(conn.frames[0].event).toBe('berth.session_created');
  });

  it('unsubscribes when the client goes away', async () => {
    const { sessionId } = await seedSession(gw.url, gw.keyA);
    const conn = await openSse(streamUrl(sessionId), { 'x-api-key': gw.keyA });
    await waitFor(() => gw.feed.subscriberCount(sessionId) === 1, 2_000, 'subscribe');
    conn.close();
    await waitFor(() => gw.feed.subscriberCount(sessionId) === 0, 2_000, 'unsubscribe');
  });
});
