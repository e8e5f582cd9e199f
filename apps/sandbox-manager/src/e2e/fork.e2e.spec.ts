import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, OpenAiResponsesServer, reply, type ScriptedModelServer, type ScriptedTurn } from '@berth/testing';
import { e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents, type PublicEvent } from '../testing/session-events';

/**
 * Fork at a turn, end to end, with each real harness on the default network (the sandbox reaches
 * the scripted model through the egress only): three turns each rewrite /workspace/state.txt; a
 * fork at turn 2 sees the file as turn 2 left it, and the model request of its next turn carries
 * the conversation up to turn 2 only (the harness's own transcript, cut at turn 2's checkpoint and
 * restored into the fork's new sandbox); the original's next turn still sees turn 3's file and
 * conversation. One platform for every harness: Claude Code and Pi speak the Messages API (the
 * manager's default endpoint), Codex the Responses API (its environment's `model.base_url`).
 */

type Harness = 'claude-code' | 'codex' | 'pi';
type Case = Readonly<{
  harness: Harness;
  api: 'messages' | 'responses';
  model: string;
  shell: (command: string) => ScriptedTurn;
  /** Where the harness keeps its conversation's JSONL transcript in the sandbox. */
  transcripts: string;
}>;

const cases: readonly Case[] = [
  { harness: 'claude-code', api: 'messages', model: 'claude-sonnet-4-5', shell: (command) => reply.toolCall('Bash', { command, description: 'work' }), transcripts: '/home/agent/.claude/projects' },
  // A model id Codex has no metadata for: it offers its plain function tools (exec_command).
  { harness: 'codex', api: 'responses', model: 'berth-model', shell: (cmd) => reply.toolCall('exec_command', { cmd }), transcripts: '/home/agent/.codex/sessions' },
  { harness: 'pi', api: 'messages', model: 'claude-sonnet-4-5', shell: (command) => reply.toolCall('bash', { command }), transcripts: '/home/agent/.pi/agent/sessions' },
];

const TURN_TIMEOUT_MS = 180_000;
const MARKS = ['ONE', 'TWO', 'THREE'] as const;

const idleCount = (events: readonly PublicEvent[]) => events.filter((e) => e.type === 'session.status_idle').length;
/** The conversation a model request carries: Messages' `messages` with its `system`, Responses' `input` with its `instructions`. */
const conversationOf = (body: unknown): string => {
  const b = body as { messages?: unknown; system?: unknown; input?: unknown; instructions?: unknown };
  return JSON.stringify([b.system ?? b.instructions ?? null, b.messages ?? b.input ?? []]);
};

let messages: ScriptedModelServer;
let responses: ScriptedModelServer;
let platform: E2ePlatform;
let client: Anthropic;

beforeAll(async () => {
  messages = await new AnthropicMessagesServer().start();
  responses = await new OpenAiResponsesServer().start();
  platform = await startE2ePlatform({ modelBaseUrl: messages.url, trustedModelEndpoints: [responses.url], managerEnv: { BERTH_WORKSPACE_SIZE_MB: '128' } });
  client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
}, 600_000);
afterAll(async () => {
  await platform?.stop();
  await messages?.close();
  await responses?.close();
}, 120_000);

describe.each(cases)('fork a $harness session at a turn (default network)', ({ harness, api, model: modelId, shell, transcripts }) => {
  const model = () => (api === 'messages' ? messages : responses);
  // Marks unique to this harness's case: the servers are shared, and a request is found by its mark.
  const mark = (what: string) => `MARK-${harness}-${what}`;

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
  /** The JSONL files under `dir` in the container. */
  const jsonlFiles = async (container: string, dir: string): Promise<string[]> => {
    const exec = await platform.runtime.exec(container, { cmd: ['find', dir, '-type', 'f', '-name', '*.jsonl'] });
    const lines: string[] = [];
    for await (const line of exec.lines) if (line.trim() !== '') lines.push(line.trim());
    expect(await exec.exit).toBe(0);
    return lines;
  };
  /** The first model request of the turn whose user message carries `text`. */
  const requestOf = (text: string): string => {
    const found = model().modelRequests.map((r) => conversationOf(r.body)).find((t) => t.includes(text));
    if (found === undefined) throw new Error(`no model request carried ${text}`);
    return found;
  };

  it(
    'the fork has turn 2’s file and conversation, the original keeps turn 3’s',
    async () => {
      const endpoint = api === 'responses' ? { model: { base_url: responses.url } } : {};
      const env = await client.beta.environments.create({ name: `fork-${harness}-env`, config: e2eEnvironmentConfig({ harness, ...endpoint }) });
      const agent = await client.beta.agents.create({ name: `fork-${harness}`, model: modelId, system: `You keep a state file (${harness}).`, tools: [{ type: 'agent_toolset_20260401' }] });
      const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
      for (const [i, what] of MARKS.entries()) {
        model().script(shell(`echo state-${i + 1} > /workspace/state.txt`), reply.text(`Wrote state ${i + 1}.`));
        await send(session.id, `${mark(what)}: write state ${i + 1}`);
      }
      const events = await listEvents(client, session.id);
      const checkpoints = events.filter((e) => e.type === 'berth.turn_checkpointed');
      expect(checkpoints).toHaveLength(3);
      for (const c of checkpoints) expect(c.workspace_snapshot).toMatchObject({ bytes: expect.any(Number), files: expect.any(Number) });
      // Resuming appends to the one transcript file the first turn made: a byte count per file cuts it at a turn.
      expect(await jsonlFiles(`berth-s-${session.id}-g1`, transcripts)).toHaveLength(1);
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

      model().script(shell('cat /workspace/state.txt > /mnt/session/outputs/fork-state.txt'), reply.text('Read it.'));
      const forkEvents = await send(fork.id, `${mark('FORK')}: what is the state?`);
      expect(forkEvents.find((e) => e.type === 'berth.session_forked')).toMatchObject({ from_session_id: session.id, from_event_id: turn2.id });
      expect(await output(fork.id, 'fork-state.txt')).toBe('state-2\n');
      // The fork ran in a sandbox of its own, which got the cut transcript: the harness resumed the conversation at turn 2.
      const forkRequest = requestOf(mark('FORK'));
      expect(forkRequest).toContain(`You keep a state file (${harness}).`);
      expect(forkRequest).toContain(mark('ONE'));
      expect(forkRequest).toContain(mark('TWO'));
      expect(forkRequest).toContain('Wrote state 2.');
      expect(forkRequest).not.toContain(mark('THREE'));
      expect(forkRequest).not.toContain('Wrote state 3.');

      model().script(shell('cat /workspace/state.txt > /mnt/session/outputs/orig-state.txt'), reply.text('Read it.'));
      await send(session.id, `${mark('ORIG')}: what is the state?`);
      expect(await output(session.id, 'orig-state.txt')).toBe('state-3\n');
      const origRequest = requestOf(mark('ORIG'));
      for (const what of MARKS) expect(origRequest).toContain(mark(what));
      expect(origRequest).toContain('Wrote state 3.');
      expect(origRequest).not.toContain(mark('FORK'));
    },
    900_000,
  );
});
