import Anthropic from '@anthropic-ai/sdk';
import { sessionSecretAad } from '@berth/contracts';
import { call, userMessage } from './support/api';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { waitFor } from './support/wait-for';

const TOKEN = 'ghp_berthForkToken0123456789';
const TRANSCRIPT = '/home/agent/.claude/projects/-workspace/hs_1.jsonl';
const line = (n: number) => `{"type":"user","turn":${n}}\n`;

type PublicEvent = { id: string; type: string; processed_at: string } & Record<string, unknown>;

describe('POST /v1/sessions/{id}/fork (the fake turn runner records checkpoints as the sandbox-manager does)', () => {
  let gw: GatewayHarness;
  let a: Anthropic;
  let agentId: string;
  let envId: string;

  beforeAll(async () => {
    gw = await startGateway({ checkpoints: true });
    a = new Anthropic({ apiKey: gw.keyA, baseURL: gw.url, maxRetries: 0 });
    agentId = (await a.beta.agents.create({ name: 'f', model: 'claude-sonnet-4-5', system: 'fork me' })).id;
    envId = (await a.beta.environments.create({ name: 'f' })).id;
  });
  afterAll(() => gw.close());

  const events = async (sessionId: string): Promise<PublicEvent[]> => (await call(gw.url, gw.keyA, 'GET', `/v1/sessions/${sessionId}/events?limit=1000`)).json.data;
  const idleTurns = async (sessionId: string): Promise<number> => (await events(sessionId)).filter((e) => e.type === 'session.status_idle').length;

  /** A session whose three turns each grew the harness transcript by one line (mirrored before the turn ended). */
  async function threeTurns(): Promise<{ id: string; messages: PublicEvent[] }> {
    const session = await a.beta.sessions.create({
      agent: agentId,
      environment_id: envId,
      title: 'original',
      metadata: { team: 'x' },
      resources: [{ type: 'github_repository', url: 'https://github.com/acme/widgets.git', authorization_token: TOKEN }],
    });
    let mirrored = 0;
    for (const n of [1, 2, 3]) {
      await gw.store.transcripts.append({ session_id: session.id, path: TRANSCRIPT, offset: mirrored, data: line(n) });
      mirrored += line(n).length;
      await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${session.id}/events`, userMessage(`turn ${n}`));
      await waitFor(async () => (await idleTurns(session.id)) === n, 5_000, `turn ${n} idle`);
    }
    return { id: session.id, messages: (await events(session.id)).filter((e) => e.type === 'user.message') };
  }

  it('by event id: a new session of the same agent, environment, resources and token, its transcript cut at that turn and its journal saying where it came from', async () => {
    const source = await threeTurns();
    const turn2 = source.messages[1];
    const forked = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${source.id}/fork`, { event_id: turn2.id });
    expect(forked.status).toBe(200);
    const fork = forked.json;
    expect(fork.id).not.toBe(source.id);
    expect(fork).toMatchObject({ type: 'session', agent: { id: agentId }, environment_id: envId, title: 'original', metadata: { team: 'x' } });
    expect(fork.resources).toEqual((await a.beta.sessions.retrieve(source.id)).resources);
    // The token is sealed to the fork's own session and resource, not copied as the original's ciphertext.
    const sealed = await gw.store.secrets.get(fork.id, fork.resources[0].id);
    expect(sealed === null ? null : gw.secrets.open(sealed, sessionSecretAad(fork.id, fork.resources[0].id))).toBe(TOKEN);
    expect(sealed?.ciphertext).not.toBe((await gw.store.secrets.get(source.id, fork.resources[0].id))?.ciphertext);
    const turnId = (await gw.store.journal.readEvents(source.id)).find((e) => e.id === turn2.id && e.type === 'UserMessageReceived');
    expect(fork.berth.forked_from).toEqual({ session_id: source.id, turn_id: turnId?.type === 'UserMessageReceived' ? turnId.data.turn_id : 'missing', event_id: turn2.id, seq: expect.any(Number) });

    expect(await gw.store.transcripts.files(fork.id)).toEqual([{ path: TRANSCRIPT, data: line(1) + line(2) }]);
    expect(await gw.store.transcripts.files(source.id)).toEqual([{ path: TRANSCRIPT, data: line(1) + line(2) + line(3) }]);

    const forkEvents = await events(fork.id);
    expect(forkEvents.find((e) => e.type === 'berth.session_forked')).toMatchObject({ from_session_id: source.id, from_turn_id: fork.berth.forked_from.turn_id, from_event_id: turn2.id });
    expect((await events(source.id)).find((e) => e.type === 'berth.fork_created')).toMatchObject({ fork_session_id: fork.id, event_id: turn2.id });

    // Both go their own ways: the fork takes a message and the original is unchanged by it.
    await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${fork.id}/events`, userMessage('fork turn'));
    await waitFor(async () => (await idleTurns(fork.id)) === 1, 5_000, 'fork turn idle');
    expect(await idleTurns(source.id)).toBe(3);
  });

  it('by seq names the same turn; with no body, the latest completed turn', async () => {
    const source = await threeTurns();
    const bySeq = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${source.id}/fork`, { seq: (await gw.store.journal.readEvents(source.id)).find((e) => e.id === source.messages[0].id)?.seq });
    expect(bySeq.status).toBe(200);
    expect(bySeq.json.berth.forked_from.event_id).toBe(source.messages[0].id);
    expect(await gw.store.transcripts.files(bySeq.json.id)).toEqual([{ path: TRANSCRIPT, data: line(1) }]);
    const latest = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${source.id}/fork`);
    expect(latest.status).toBe(200);
    expect(latest.json.berth.forked_from.event_id).toBe(source.messages[2].id);
  });

  it('answers 404 for another owner, 400 for an unknown event or both selectors, 409 for a turn still running', async () => {
    const source = await threeTurns();
    const b = await call(gw.url, gw.keyB, 'POST', `/v1/sessions/${source.id}/fork`, {});
    expect(b.status).toBe(404);
    expect(b.json.error.type).toBe('not_found_error');
    const unknown = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${source.id}/fork`, { event_id: 'sevt_nope_0' });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatchObject({ code: 'FORK_EVENT_UNKNOWN' });
    const both = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${source.id}/fork`, { event_id: source.messages[0].id, seq: 1 });
    expect(both.status).toBe(400);
    // A turn waiting for a tool confirmation has not finished.
    await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${source.id}/events`, userMessage('tool: ls'));
    await waitFor(async () => (await events(source.id)).some((e) => e.type === 'session.status_idle' && (e.stop_reason as { type: string }).type === 'requires_action'), 5_000, 'waiting turn');
    const waiting = (await events(source.id)).filter((e) => e.type === 'user.message').at(-1) as PublicEvent;
    const running = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${source.id}/fork`, { event_id: waiting.id });
    expect(running.status).toBe(409);
    expect(running.json.error).toMatchObject({ code: 'FORK_TURN_RUNNING' });
    // An earlier turn can still be forked meanwhile.
    expect((await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${source.id}/fork`, { event_id: source.messages[1].id })).status).toBe(200);
  });

  it('refuses a session without a checkpointed turn (409 FORK_POINT_UNAVAILABLE)', async () => {
    const session = await a.beta.sessions.create({ agent: agentId, environment_id: envId });
    const answer = await call(gw.url, gw.keyA, 'POST', `/v1/sessions/${session.id}/fork`, {});
    expect(answer.status).toBe(409);
    expect(answer.json.error).toMatchObject({ code: 'FORK_POINT_UNAVAILABLE' });
  });
});
