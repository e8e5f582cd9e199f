import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, reply } from '@berth/testing';
import { MongoClient } from 'mongodb';
import { e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents } from '../testing/session-events';

/**
 * The whole platform on MongoDB (every service's `BERTH_STORE_URL` on the server `MONGODB_URI`
 * names, a database of its own): an agent with its own model and system prompt runs a real Claude
 * Code turn with a tool call on the default network, through the gateway with the official SDK,
 * and the journal in MongoDB holds the turn once. Runs wherever `MONGODB_URI` names a replica set
 * (a single-node one is enough); no MongoDB server can run where this suite was written, so there
 * it is reported as not run.
 */
const uri = process.env.MONGODB_URI;
if (!uri) console.log('NOT RUN: the end-to-end turn on MongoDB (MONGODB_URI is not set; point it at a replica set, a single-node one is enough)');

/** The same server and options, another database: `mongodb://hosts/<db>?options`. */
const withDatabase = (url: string, db: string): string => url.replace(/^(mongodb(?:\+srv)?:\/\/[^/?]+)(?:\/[^?]*)?/, `$1/${db}`);

(uri ? describe : describe.skip)('the platform on MongoDB', () => {
  const dbName = `berth_e2e_${process.pid}_${Date.now().toString(36)}`;
  let model: AnthropicMessagesServer;
  let platform: E2ePlatform;
  let client: Anthropic;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    platform = await startE2ePlatform({ modelBaseUrl: model.url, storeUrl: withDatabase(uri as string, dbName) });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
  }, 600_000);
  afterAll(async () => {
    await platform?.stop();
    await model?.close();
    const admin = await new MongoClient(uri as string).connect();
    await admin.db(dbName).dropDatabase();
    await admin.close();
  }, 120_000);

  it('runs a turn with a tool call and journals it in MongoDB once', async () => {
    const agent = await client.beta.agents.create({ name: 'mongo-agent', model: 'claude-sonnet-4-6', system: 'You are stored in MongoDB.', tools: [{ type: 'agent_toolset_20260401' }] });
    const environment = await client.beta.environments.create({ name: 'mongo-env', config: e2eEnvironmentConfig({ harness: 'claude-code' }) });
    const session = await client.beta.sessions.create({ agent: { type: 'agent', id: agent.id }, environment_id: environment.id });
    model.script(reply.toolCall('Bash', { command: 'echo from-mongo', description: 'echo' }), reply.text('Echoed.'));
    const requests = model.modelRequests.length;

    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Echo something' }] }] });
    const events = await waitFor('the turn to end', async () => {
      const all = await listEvents(client, session.id);
      return all.some((e) => e.type === 'session.status_idle' && (e['stop_reason'] as { type?: string } | undefined)?.type === 'end_turn') ? all : null;
    }, 180_000, platform.logs);

    expect(events.filter((e) => e.type === 'agent.tool_use').map((e) => e['name'])).toEqual(['bash']);
    expect(JSON.stringify(events.find((e) => e.type === 'agent.tool_result'))).toContain('from-mongo');
    expect(JSON.stringify(model.modelRequests[requests]?.body)).toContain('You are stored in MongoDB.');
    const admin = await new MongoClient(uri as string).connect();
    try {
      const journal = await admin.db(dbName).collection('journal').find({ session_id: session.id }).sort({ seq: 1 }).toArray();
      const seqs = journal.map((d) => d['seq'] as number);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      const types = journal.map((d) => d['type'] as string);
      expect(types.filter((t) => t === 'UserMessageReceived')).toHaveLength(1);
      expect(types.filter((t) => t === 'TurnCompleted')).toHaveLength(1);
    } finally {
      await admin.close();
    }
  }, 300_000);
});
