import Anthropic from '@anthropic-ai/sdk';
import { toPublicEvent } from '@berth/contracts';
import { startGateway, type GatewayHarness } from './support/gateway-harness';
import { waitFor } from './support/wait-for';

/** The official SDK, unchanged, against a running gateway: the Managed Agents surface works. */
/** The built-in toolset with bash waiting for `user.tool_confirmation`. */
const ASK_BASH: Anthropic.Beta.Agents.BetaManagedAgentsAgentToolset20260401Params = {
  type: 'agent_toolset_20260401',
  configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }],
};

describe('official @anthropic-ai/sdk against the gateway', () => {
  let gw: GatewayHarness;
  let client: Anthropic;

  beforeAll(async () => {
    gw = await startGateway();
    client = new Anthropic({ apiKey: gw.keyA, baseURL: gw.url, maxRetries: 0 });
  });
  afterAll(() => gw.close());

  it('creates, versions and archives an agent', async () => {
    const agent = await client.beta.agents.create({ name: 'coder', model: 'claude-sonnet-4-5', system: 'be brief', tools: [{ type: 'agent_toolset_20260401' }] });
    expect(agent).toMatchObject({ type: 'agent', name: 'coder', version: 1, model: { id: 'claude-sonnet-4-5' }, archived_at: null });
    expect(agent.id).toMatch(/^agent_/);
    expect(agent.tools[0]).toMatchObject({ type: 'agent_toolset_20260401', default_config: { enabled: true, permission_policy: { type: 'always_allow' } } });

    const v2 = await client.beta.agents.update(agent.id, { version: 1, system: 'be thorough' });
    expect(v2).toMatchObject({ version: 2, system: 'be thorough' });
    await expect(client.beta.agents.update(agent.id, { version: 1, system: 'stale' })).rejects.toMatchObject({ status: 409 });

    expect(await client.beta.agents.retrieve(agent.id, { version: 1 })).toMatchObject({ version: 1, system: 'be brief' });
    expect((await client.beta.agents.retrieve(agent.id)).version).toBe(2);
    const versions: number[] = [];
    for await (const v of client.beta.agents.versions.list(agent.id, { limit: 1 })) versions.push(v.version);
    expect(versions.sort()).toEqual([1, 2]);

    const listed: string[] = [];
    for await (const a of client.beta.agents.list()) listed.push(a.id);
    expect(listed).toContain(agent.id);

    const archived = await client.beta.agents.archive(agent.id);
    expect(archived.archived_at).not.toBeNull();
  });

  it('manages environments with Berth config fields', async () => {
    const env = await client.beta.environments.create({
      name: 'sandbox',
      config: { type: 'cloud', networking: { type: 'unrestricted' }, harness: 'codex', network: 'none', resources: { memory_mb: 1024 } } as Anthropic.Beta.Environments.BetaCloudConfigParams,
    });
    expect(env).toMatchObject({ type: 'environment', name: 'sandbox', config: { type: 'cloud', harness: 'codex', network: 'none', resources: { memory_mb: 1024, cpus: 2, pids: 512 } } });
    const updated = await client.beta.environments.update(env.id, { name: 'renamed', metadata: { team: 'x' } });
    expect(updated).toMatchObject({ name: 'renamed', metadata: { team: 'x' }, config: { harness: 'codex' } });
    expect((await client.beta.environments.retrieve(env.id)).name).toBe('renamed');
    expect((await client.beta.environments.archive(env.id)).archived_at).not.toBeNull();
    expect(await client.beta.environments.delete(env.id)).toEqual({ id: env.id, type: 'environment_deleted' });
    await expect(client.beta.environments.retrieve(env.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('runs a session: create, stream, send, list, archive, delete', async () => {
    const agent = await client.beta.agents.create({ name: 'echo', model: 'claude-sonnet-4-5' });
    const env = await client.beta.environments.create({ name: 'default' });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id, title: 'first', metadata: { ticket: '42' } });
    expect(session).toMatchObject({ type: 'session', title: 'first', metadata: { ticket: '42' }, environment_id: env.id, agent: { id: agent.id, version: 1, name: 'echo' } });
    expect(session.id).toMatch(/^sesn_/);

    // Stream before send, as the reference recipe says.
    const stream = await client.beta.sessions.events.stream(session.id);
    const seen: { type: string; id: string }[] = [];
    const reading = (async () => {
      for await (const event of stream) {
        seen.push(event as { type: string; id: string });
        if (event.type === 'session.status_idle') break;
      }
    })();

    const sent = await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }] });
    expect(sent.data?.[0]).toMatchObject({ type: 'user.message', content: [{ type: 'text', text: 'hello' }] });
    await reading;
    const types = seen.map((e) => e.type);
    expect(types).toContain('user.message');
    expect(types).toContain('session.status_running');
    expect(types).toContain('agent.message');
    expect(types[types.length - 1]).toBe('session.status_idle');

    const listed = [];
    for await (const e of client.beta.sessions.events.list(session.id, { limit: 2 })) listed.push(e);
    const journal = await gw.store.journal.readEvents(session.id);
    expect(listed).toEqual(journal.map(toPublicEvent));
    const agentMessages = [];
    for await (const e of client.beta.sessions.events.list(session.id, { types: ['agent.message'] })) agentMessages.push(e);
    expect(agentMessages).toEqual([expect.objectContaining({ type: 'agent.message', content: [{ type: 'text', text: 'echo: hello' }] })]);

    await waitFor(async () => (await client.beta.sessions.retrieve(session.id)).status === 'idle');
    const page = await client.beta.sessions.list({ agent_id: agent.id });
    expect(page.data.map((s) => s.id)).toEqual([session.id]);

    const renamed = await client.beta.sessions.update(session.id, { title: 'renamed' });
    expect(renamed.title).toBe('renamed');
    const archived = await client.beta.sessions.archive(session.id);
    expect(archived.archived_at).not.toBeNull();
    expect(await client.beta.sessions.delete(session.id)).toEqual({ id: session.id, type: 'session_deleted' });
    await expect(client.beta.sessions.retrieve(session.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('creates a session with initial events and a pinned agent version', async () => {
    const agent = await client.beta.agents.create({ name: 'pinned', model: 'claude-sonnet-4-5' });
    await client.beta.agents.update(agent.id, { system: 'v2' });
    const env = await client.beta.environments.create({ name: 'e' });
    const session = await client.beta.sessions.create({
      agent: { type: 'agent', id: agent.id, version: 1 },
      environment_id: env.id,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'start' }] }],
    });
    expect(session.agent.version).toBe(1);
    await waitFor(async () => {
      const events = [];
      for await (const e of client.beta.sessions.events.list(session.id)) events.push(e);
      return events.some((e) => e.type === 'agent.message');
    });
  });

  it('asks for a tool confirmation and resumes after user.tool_confirmation', async () => {
    const agent = await client.beta.agents.create({ name: 'asker', model: 'claude-sonnet-4-5', tools: [ASK_BASH] });
    const env = await client.beta.environments.create({ name: 'ask' });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const stream = await client.beta.sessions.events.stream(session.id);
    const seen: Record<string, any>[] = [];
    let confirmed = false;
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'tool: ls -la' }] }] });
    for await (const event of stream) {
      seen.push(event);
      if (event.type !== 'session.status_idle') continue;
      if (event.stop_reason.type === 'requires_action' && !confirmed) {
        const [toolUseId] = event.stop_reason.event_ids;
        expect(seen.find((e) => e.type === 'agent.tool_use')).toMatchObject({ id: toolUseId, name: 'bash', input: { command: 'ls -la' }, evaluated_permission: 'ask' });
        expect((await client.beta.sessions.retrieve(session.id)).status).toBe('idle');
        const sent = await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.tool_confirmation', tool_use_id: toolUseId, result: 'allow' }] });
        expect(sent.data?.[0]).toMatchObject({ type: 'user.tool_confirmation', tool_use_id: toolUseId, result: 'allow' });
        confirmed = true;
      } else if (event.stop_reason.type === 'end_turn') break;
    }
    const toolUse = seen.find((e) => e.type === 'agent.tool_use');
    expect(seen.find((e) => e.type === 'agent.tool_result')).toMatchObject({ tool_use_id: toolUse?.id, is_error: false, content: [{ type: 'text', text: 'ran' }] });
    expect(seen.map((e) => e.type)).toEqual(expect.arrayContaining(['user.tool_confirmation', 'agent.message']));
  });

  it('interrupts a running turn with user.interrupt', async () => {
    const agent = await client.beta.agents.create({ name: 'stopper', model: 'claude-sonnet-4-5', tools: [ASK_BASH] });
    const env = await client.beta.environments.create({ name: 'stop' });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'tool: sleep 100' }] }] });
    const listAll = async () => {
      const events = [];
      for await (const e of client.beta.sessions.events.list(session.id)) events.push(e);
      return events;
    };
    await waitFor(async () => (await listAll()).some((e) => e.type === 'agent.tool_use'));
    const sent = await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.interrupt' }] });
    expect(sent.data?.[0]?.type).toBe('user.interrupt');
    expect((await listAll()).map((e) => e.type)).toContain('user.interrupt');
  });

  it('answers errors in the Anthropic shape the SDK understands', async () => {
    await expect(client.beta.sessions.retrieve('sesn_doesnotexist')).rejects.toMatchObject({
      status: 404,
      error: { type: 'error', error: { type: 'not_found_error', code: 'SESSION_NOT_FOUND' } },
    });
    await expect(client.beta.agents.create({ name: '', model: 'm' })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('lets an environment name only a model-key variable, never another secret of the sandbox-manager', async () => {
    const withKey = (api_key_env: string) =>
      client.beta.environments.create({ name: 'model', config: { type: 'cloud', model: { base_url: 'https://models.example', api_key_env } } as Anthropic.Beta.Environments.BetaCloudConfigParams });
    await expect(withKey('BERTH_STORE_URL')).rejects.toMatchObject({ status: 400, error: { error: { message: expect.stringContaining('config.model.api_key_env') } } });
    await expect(withKey('PATH')).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    expect((await withKey('BERTH_MODEL_KEY_TEAM_A')).config).toMatchObject({ model: { api_key_env: 'BERTH_MODEL_KEY_TEAM_A' } });
  });

  it('creates an environment with no network settings on the egress with unrestricted networking', async () => {
    const env = await client.beta.environments.create({ name: 'plain' });
    expect(env.config).toMatchObject({ type: 'cloud', network: 'egress', networking: { type: 'unrestricted' } });
    const legacy = await client.beta.environments.create({ name: 'old', config: { type: 'cloud', network: 'bridge' } as Anthropic.Beta.Environments.BetaCloudConfigParams });
    expect(legacy.config).toMatchObject({ network: 'egress' });
  });

  it('keeps limited networking as given, hosts normalized, and refuses a host that is not one', async () => {
    const env = await client.beta.environments.create({
      name: 'limited',
      config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['API.GitHub.com.', '*.npmjs.org'], allow_package_managers: true } },
    });
    expect(env.config).toMatchObject({ networking: { type: 'limited', allowed_hosts: ['api.github.com', '*.npmjs.org'], allow_package_managers: true, allow_mcp_servers: false } });
    for (const bad of ['https://api.github.com', 'a b', '*', 'api.github.com/x']) {
      await expect(
        client.beta.environments.create({ name: 'bad', config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: [bad] } } }),
      ).rejects.toMatchObject({ status: 400, error: { error: { code: 'VALIDATION_ERROR', message: expect.stringContaining('allowed_hosts') } } });
    }
  });

  it('refuses the host network with 400 HOST_NETWORK_NOT_ALLOWED naming the field, on create and on update', async () => {
    const host = { type: 'cloud', network: 'host' } as Anthropic.Beta.Environments.BetaCloudConfigParams;
    const refusal = { status: 400, error: { type: 'error', error: { type: 'invalid_request_error', code: 'HOST_NETWORK_NOT_ALLOWED', details: { field: 'config.network' } } } };
    await expect(client.beta.environments.create({ name: 'host', config: host })).rejects.toMatchObject(refusal);
    const env = await client.beta.environments.create({ name: 'later-host' });
    await expect(client.beta.environments.update(env.id, { config: host })).rejects.toMatchObject(refusal);
    expect((await client.beta.environments.retrieve(env.id)).config).toMatchObject({ network: 'egress' });
  });
});

describe('a gateway whose operator allows the host network', () => {
  it('accepts config.network host', async () => {
    const gw = await startGateway({ gateway: { allowHostNetwork: true } });
    try {
      const client = new Anthropic({ apiKey: gw.keyA, baseURL: gw.url, maxRetries: 0 });
      const env = await client.beta.environments.create({ name: 'host', config: { type: 'cloud', network: 'host' } as Anthropic.Beta.Environments.BetaCloudConfigParams });
      expect(env.config).toMatchObject({ network: 'host' });
    } finally {
      await gw.close();
    }
  });
});
