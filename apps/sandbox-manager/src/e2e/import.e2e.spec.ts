import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, reply } from '@berth/testing';
import { startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents, type PublicEvent } from '../testing/session-events';

/**
 * Move a session between installs, end to end, with real Claude Code on the default network: on a
 * first platform a turn writes a file into /workspace and an output; the session is exported and
 * that platform stopped; a second platform (its own store, state dir, NATS and services) imports
 * the archive, and its next turn continues the harness conversation (the model request carries the
 * earlier turn) and reads the file written before the export.
 */

const TURN_TIMEOUT_MS = 180_000;

const idleCount = (events: readonly PublicEvent[]) => events.filter((e) => e.type === 'session.status_idle').length;
const bash = (command: string) => ({ kind: 'turn' as const, text: 'Working.', toolCalls: [{ name: 'Bash', input: { command, description: 'work' } }] });
const textOf = (body: unknown): string => JSON.stringify((body as { messages?: unknown }).messages ?? []);

describe('export a session and import it on another platform instance (real Claude Code, default network)', () => {
  let model: AnthropicMessagesServer;
  let platform: E2ePlatform | undefined;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
  });
  afterAll(async () => {
    await platform?.stop();
    await model?.close();
  }, 60_000);

  const send = async (p: E2ePlatform, client: Anthropic, sessionId: string, text: string) => {
    const before = idleCount(await listEvents(client, sessionId));
    await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    const events = await waitFor(`turn ${before + 1} of ${sessionId} to end`, async () => {
      const all = await listEvents(client, sessionId);
      return idleCount(all) > before ? all : null;
    }, TURN_TIMEOUT_MS, p.logs);
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    return events;
  };
  const output = async (client: Anthropic, sessionId: string, name: string): Promise<string> => {
    const file = (await client.beta.files.list({ scope_id: sessionId })).data.find((f) => f.filename === name);
    if (file === undefined) throw new Error(`no output ${name} in ${sessionId}`);
    return (await client.beta.files.download(file.id)).text();
  };
  const requestOf = (mark: string): string => {
    const found = model.modelRequests.map((r) => textOf(r.body)).find((t) => t.includes(mark));
    if (found === undefined) throw new Error(`no model request carried ${mark}`);
    return found;
  };

  it(
    'the imported session’s next turn carries the earlier turn and reads the file written before the export',
    async () => {
      // The first install: one turn writes /workspace/notes.txt and an output file.
      const first = await startE2ePlatform({ modelBaseUrl: model.url });
      platform = first;
      const a = new Anthropic({ apiKey: first.apiKey, baseURL: first.gatewayUrl, maxRetries: 0 });
      const agent = await a.beta.agents.create({ name: 'mover', model: 'claude-sonnet-4-5', system: 'You keep notes in the workspace.', tools: [{ type: 'agent_toolset_20260401' }] });
      const env = await a.beta.environments.create({ name: 'mover-env' });
      const session = await a.beta.sessions.create({ agent: agent.id, environment_id: env.id, title: 'moving' });
      model.script(bash('echo kept-across-installs > /workspace/notes.txt && echo first-report > /mnt/session/outputs/report.txt'), reply.text('Noted.'));
      await send(first, a, session.id, 'MARK-BEFORE: write the notes');
      expect(await output(a, session.id, 'report.txt')).toBe('first-report\n');
      const exported = await fetch(`${first.gatewayUrl}/v1/sessions/${session.id}/export`, { headers: { 'x-api-key': first.apiKey } });
      expect(exported.status).toBe(200);
      const archive = Buffer.from(await exported.arrayBuffer());
      await first.stop();
      platform = undefined;

      // The second install: another store, state dir, broker and services.
      const second = await startE2ePlatform({ modelBaseUrl: model.url });
      platform = second;
      expect(second.storePath).not.toBe(first.storePath);
      const b = new Anthropic({ apiKey: second.apiKey, baseURL: second.gatewayUrl, maxRetries: 0 });
      const answer = await fetch(`${second.gatewayUrl}/v1/sessions/import`, { method: 'POST', headers: { 'x-api-key': second.apiKey, 'content-type': 'application/x-tar' }, body: archive });
      expect(answer.status).toBe(200);
      const imported = (await answer.json()) as { id: string; title: string; agent: { id: string; system: string }; environment_id: string; berth: { imported_from: { session_id: string } } };
      expect(imported).toMatchObject({ title: 'moving', agent: { system: 'You keep notes in the workspace.' }, berth: { imported_from: { session_id: session.id } } });
      expect(imported.id).not.toBe(session.id);
      expect((await fetch(`${second.gatewayUrl}/v1/sessions/${imported.id}`, { headers: { 'x-api-key': second.otherApiKey } })).status).toBe(404);
      expect(await output(b, imported.id, 'report.txt')).toBe('first-report\n');

      model.script(bash('cat /workspace/notes.txt > /mnt/session/outputs/read-back.txt'), reply.text('Read it.'));
      const events = await send(second, b, imported.id, 'MARK-AFTER: what do the notes say?');
      expect(events.find((e) => e.type === 'berth.session_imported')).toMatchObject({ from_session_id: session.id, from_agent: { id: agent.id }, workspace: true });
      expect(await output(b, imported.id, 'read-back.txt')).toBe('kept-across-installs\n');
      const request = requestOf('MARK-AFTER');
      expect(request).toContain('MARK-BEFORE');
      expect(request).toContain('Noted.');
      // The imported agent's own system prompt reached the model.
      const body = model.modelRequests.find((r) => textOf(r.body).includes('MARK-AFTER'))?.body as { system?: unknown };
      expect(JSON.stringify(body.system)).toContain('You keep notes in the workspace.');
    },
    900_000,
  );
});
