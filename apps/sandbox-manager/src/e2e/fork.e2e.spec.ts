import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, reply } from '@berth/testing';
import { startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents, type PublicEvent } from '../testing/session-events';

/**
 * Fork at a turn, end to end, with real Claude Code on the default network (the sandbox reaches the
 * scripted model through the egress only): three turns each rewrite /workspace/state.txt; a fork at
 * turn 2 sees the file as turn 2 left it, and the model request of its next turn carries the
 * conversation up to turn 2 only; the original's next turn still sees turn 3's file and conversation.
 */

const TURN_TIMEOUT_MS = 180_000;
const MARKS = ['MARK-ONE', 'MARK-TWO', 'MARK-THREE'] as const;

const idleCount = (events: readonly PublicEvent[]) => events.filter((e) => e.type === 'session.status_idle').length;
const bash = (command: string) => ({ kind: 'turn' as const, text: 'Working.', toolCalls: [{ name: 'Bash', input: { command, description: 'work' } }] });
const textOf = (body: unknown): string => JSON.stringify((body as { messages?: unknown }).messages ?? []);

describe('fork a session at a turn (real Claude Code, default network)', () => {
  let model: AnthropicMessagesServer;
  let platform: E2ePlatform;
  let client: Anthropic;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    platform = await startE2ePlatform({ modelBaseUrl: model.url, managerEnv: { BERTH_WORKSPACE_SIZE_MB: '128' } });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
  }, 600_000);
  afterAll(async () => {
    await platform?.stop();
    await model?.close();
  }, 60_000);

  const send = async (sessionId: string, text: string) => {
    const before = idleCount(await listEvents(client, sessionId));
    await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    const events = await waitFor(`turn ${before + 1} of ${sessionId} to end`, async () => {
      const all = await listEvents(client, sessionId);
      return idleCount(all) > before ? all : null;
    }, TURN_TIMEOUT_MS, platform.logs);
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    return events;
  };
  /** The output file a turn wrote, as a session file (captured before the turn's idle). */
  const output = async (sessionId: string, name: string): Promise<string> => {
    const file = (await client.beta.files.list({ scope_id: sessionId })).data.find((f) => f.filename === name);
    if (file === undefined) throw new Error(`no output ${name} in ${sessionId}`);
    return (await client.beta.files.download(file.id)).text();
  };
  /** The first model request of the turn whose user message carries `mark`. */
  const requestOf = (mark: string): string => {
    const found = model.modelRequests.map((r) => textOf(r.body)).find((t) => t.includes(mark));
    if (found === undefined) throw new Error(`no model request carried ${mark}`);
    return found;
  };

  it(
    'the fork has turn 2’s file and conversation, the original keeps turn 3’s',
    async () => {
      const agent = await client.beta.agents.create({ name: 'fork-agent', model: 'claude-sonnet-4-5', system: 'You keep a state file.', tools: [{ type: 'agent_toolset_20260401' }] });
      const env = await client.beta.environments.create({ name: 'fork-env' });
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
      for (const [i, mark] of MARKS.entries()) {
        model.script(bash(`echo state-${i + 1} > /workspace/state.txt`), reply.text(`Wrote state ${i + 1}.`));
        await send(session.id, `${mark}: write state ${i + 1}`);
      }
      const events = await listEvents(client, session.id);
      const checkpoints = events.filter((e) => e.type === 'berth.turn_checkpointed');
      expect(checkpoints).toHaveLength(3);
      for (const c of checkpoints) expect(c.workspace_snapshot).toMatchObject({ bytes: expect.any(Number), files: expect.any(Number) });
      const turn2 = events.filter((e) => e.type === 'user.message')[1] as PublicEvent;

      const forked = await fetch(`${platform.gatewayUrl}/v1/sessions/${session.id}/fork`, {
        method: 'POST',
        headers: { 'x-api-key': platform.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ event_id: turn2.id }),
      });
      expect(forked.status).toBe(200);
      const fork = (await forked.json()) as { id: string; berth: { forked_from: { session_id: string; event_id: string } } };
      expect(fork.berth.forked_from).toMatchObject({ session_id: session.id, event_id: turn2.id });
      expect((await fetch(`${platform.gatewayUrl}/v1/sessions/${session.id}/fork`, { method: 'POST', headers: { 'x-api-key': platform.otherApiKey } })).status).toBe(404);

      model.script(bash('cat /workspace/state.txt > /mnt/session/outputs/fork-state.txt'), reply.text('Read it.'));
      const forkEvents = await send(fork.id, 'MARK-FORK: what is the state?');
      expect(forkEvents.find((e) => e.type === 'berth.session_forked')).toMatchObject({ from_session_id: session.id, from_event_id: turn2.id });
      expect(await output(fork.id, 'fork-state.txt')).toBe('state-2\n');
      const forkRequest = requestOf('MARK-FORK');
      expect(forkRequest).toContain('MARK-ONE');
      expect(forkRequest).toContain('MARK-TWO');
      expect(forkRequest).not.toContain('MARK-THREE');

      model.script(bash('cat /workspace/state.txt > /mnt/session/outputs/orig-state.txt'), reply.text('Read it.'));
      await send(session.id, 'MARK-ORIG: what is the state?');
      expect(await output(session.id, 'orig-state.txt')).toBe('state-3\n');
      const origRequest = requestOf('MARK-ORIG');
      for (const mark of MARKS) expect(origRequest).toContain(mark);
      expect(origRequest).not.toContain('MARK-FORK');
    },
    900_000,
  );
});
