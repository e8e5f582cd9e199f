import { ValidationError } from '@berth/core';
import { parseWith } from '../parse';
import { agentConfigAfterUpdate, agentConfigFromCreate, AgentCreateParamsSchema, AGENT_TOOLSET, readAgentConfig, type AgentCreateParams } from './agent-config';
import { permissionModeOf, resolveAgentTools } from './agent-tools';
import { agentConfigIssuesFor, refuseConfigIssues } from './config-issues';
import { environmentConfigFrom, EnvironmentCreateParamsSchema, readEnvironmentConfig } from './environment-config';

const agent = (over: Partial<AgentCreateParams> = {}) => agentConfigFromCreate({ name: 'a', model: 'claude-sonnet-4-5', tools: [{ type: AGENT_TOOLSET }], ...over });
const fieldOf = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (error) {
    if (error instanceof ValidationError) return error.field;
    throw error;
  }
  return undefined;
};

describe('the agent contract', () => {
  it('stores the Managed Agents shape: model as {id}, resolved toolset defaults, per-tool type', () => {
    const config = agent({ model: { id: 'claude-opus-4-7', effort: 'high' }, tools: [{ type: AGENT_TOOLSET, configs: [{ name: 'bash', enabled: false }] }], system: '' });
    expect(config.model).toEqual({ id: 'claude-opus-4-7', effort: { type: 'high' } });
    expect(config.system).toBeNull();
    expect(config.tools).toEqual([
      {
        type: AGENT_TOOLSET,
        default_config: { enabled: true, permission_policy: { type: 'always_allow' } },
        configs: [{ name: 'bash', type: 'bash', enabled: false, permission_policy: { type: 'always_allow' } }],
      },
    ]);
    expect(readAgentConfig(JSON.parse(JSON.stringify(config)))).toEqual(config);
  });

  it('refuses a field it does not know, naming it', () => {
    expect(fieldOf(() => parseWith(AgentCreateParamsSchema, { name: 'a', model: 'm', temperature: 1 }))).toBe('temperature');
    expect(fieldOf(() => parseWith(AgentCreateParamsSchema, { name: 'a', model: 'm', tools: [{ type: AGENT_TOOLSET, configs: [{ name: 'shell' }] }] }))).toBe('tools.0.configs.0.name');
  });

  it('updates field by field: omitted keeps, null and empty clear, metadata patches', () => {
    const current = agent({ system: 'v1', metadata: { a: '1', b: '2' } });
    const next = agentConfigAfterUpdate(current, { system: null, metadata: { a: null, c: '3' } });
    expect(next).toMatchObject({ system: null, metadata: { b: '2', c: '3' }, tools: current.tools, model: current.model });
    expect(agentConfigAfterUpdate(current, { tools: null }).tools).toEqual([]);
  });

  it('resolves tools: a configs entry over default_config, no toolset means no built-in tools', () => {
    const tools = resolveAgentTools(agent({ tools: [{ type: AGENT_TOOLSET, default_config: { permission_policy: { type: 'always_ask' } }, configs: [{ name: 'read', permission_policy: { type: 'always_allow' } }] }] }));
    expect(tools.builtin.bash).toMatchObject({ enabled: true, policy: 'always_ask', explicit: false, path: 'tools.0.default_config' });
    expect(tools.builtin.read).toMatchObject({ enabled: true, policy: 'always_allow', explicit: true, path: 'tools.0.configs.0' });
    expect(Object.values(resolveAgentTools(agent({ tools: [] })).builtin).every((t) => !t.enabled)).toBe(true);
    expect(permissionModeOf(agent())).toBe('always_allow');
    expect(permissionModeOf(agent({ tools: [{ type: AGENT_TOOLSET, configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] }] }))).toBe('always_ask');
  });
});

describe('custom tools', () => {
  const weather = { type: 'custom' as const, name: 'get_weather', description: 'The weather', input_schema: { type: 'object' as const } };
  const issues = (over: Partial<AgentCreateParams>, harness: Parameters<typeof agentConfigIssuesFor>[1]) => agentConfigIssuesFor(agent(over), harness);

  it('are honoured on claude-code, codex and pi and refused, naming the tool and why, on the harnesses that cannot offer them', () => {
    for (const harness of ['claude-code', 'codex', 'pi'] as const) expect(issues({ tools: [{ type: AGENT_TOOLSET }, weather] }, harness)).toEqual([]);
    for (const harness of ['hermes', 'deepseek-harness'] as const) {
      expect(issues({ tools: [{ type: AGENT_TOOLSET }, weather] }, harness)).toEqual([{ path: 'tools.1', message: expect.stringMatching(new RegExp(`^${harness} cannot offer custom tools: .*assumed protocol`)) }]);
    }
  });

  it('refuse a second tool of the same name; an MCP server is never named berth (their server\'s name, which the adapters read as custom tools)', () => {
    expect(issues({ tools: [weather, weather] }, 'claude-code')).toEqual([{ path: 'tools.1.name', message: 'a second custom tool named get_weather' }]);
    const berth = { mcp_servers: [{ type: 'url' as const, name: 'berth', url: 'https://mcp.example/mcp' }] };
    expect(issues({ ...berth, tools: [{ type: 'mcp_toolset', mcp_server_name: 'berth' }, weather] }, 'claude-code')).toEqual([{ path: 'mcp_servers.0.name', message: expect.stringContaining('custom tools under') }]);
    expect(issues({ ...berth, tools: [{ type: 'mcp_toolset', mcp_server_name: 'berth' }] }, 'codex')).toEqual([{ path: 'mcp_servers.0.name', message: expect.stringContaining('custom tools under') }]);
  });
});

describe('what a harness cannot honour', () => {
  const docs = { mcp_servers: [{ type: 'url' as const, name: 'docs', url: 'https://mcp.example/mcp' }] };
  const issue = (over: Partial<AgentCreateParams>, harness: Parameters<typeof agentConfigIssuesFor>[1]) => agentConfigIssuesFor(agent(over), harness)[0];

  it.each([
    ['codex', { tools: [{ type: AGENT_TOOLSET, configs: [{ name: 'bash' as const, permission_policy: { type: 'always_ask' as const } }] }] }, 'tools.0.default_config.permission_policy', 'every tool or of none'],
    ['pi', { tools: [{ type: AGENT_TOOLSET, configs: [{ name: 'bash' as const, permission_policy: { type: 'always_ask' as const } }] }] }, 'tools.0.default_config.permission_policy', 'every tool or of none'],
    ['codex', { ...docs, tools: [{ type: AGENT_TOOLSET, default_config: { permission_policy: { type: 'always_ask' as const } } }, { type: 'mcp_toolset' as const, mcp_server_name: 'docs', default_config: { permission_policy: { type: 'always_ask' as const } } }] }, 'tools.1.default_config.permission_policy', 'confirmation of an MCP tool call'],
    ['hermes', { tools: [{ type: AGENT_TOOLSET, default_config: { permission_policy: { type: 'always_ask' as const } } }] }, 'tools.0.default_config.permission_policy', 'cannot wait for tool confirmation'],
    ['pi', { ...docs, tools: [{ type: 'mcp_toolset' as const, mcp_server_name: 'docs' }] }, 'mcp_servers', 'cannot connect to MCP servers'],
    ['pi', { tools: [{ type: AGENT_TOOLSET, configs: [{ name: 'web_fetch' as const, enabled: true }] }] }, 'tools.0.configs.0', 'has no web_fetch tool'],
    ['pi', { model: { id: 'x', effort: 'max' as const } }, 'model.effort', 'has no effort max'],
    ['claude-code', { model: { id: 'x', speed: 'fast' as const } }, 'model.speed', 'no fast mode'],
    ['codex', { tools: [{ type: AGENT_TOOLSET, configs: [{ name: 'read' as const, enabled: false }] }] }, 'tools.0.configs.0', 'enable or disable them together'],
    ['claude-code', { ...docs, tools: [{ type: 'mcp_toolset' as const, mcp_server_name: 'docs', default_config: { enabled: false }, configs: [{ name: 'lookup', enabled: true }] }] }, 'tools.0.configs.0', 'cannot offer only some tools'],
    ['claude-code', { ...docs, tools: [{ type: 'mcp_toolset' as const, mcp_server_name: 'docs', default_config: { permission_policy: { type: 'always_ask' as const } }, configs: [{ name: 'lookup', permission_policy: { type: 'always_allow' as const } }] }] }, 'tools.0.configs.0.permission_policy', 'cannot exempt'],
    ['hermes', { tools: [{ type: AGENT_TOOLSET, configs: [{ name: 'bash' as const, enabled: false }] }] }, 'tools.0.configs.0', 'cannot take its bash tool away'],
    ['deepseek-harness', { tools: [{ type: AGENT_TOOLSET, configs: [{ name: 'bash' as const, permission_policy: { type: 'always_ask' as const } }] }] }, 'tools.0.default_config.permission_policy', 'every tool or of none'],
  ] as const)('%s: %j → %s', (harness, over, path, message) => {
    expect(issue(over as unknown as Partial<AgentCreateParams>, harness)).toEqual({ path, message: expect.stringContaining(message) });
  });

  it('accepts the same agents on the harnesses that can honour them', () => {
    expect(issue({ tools: [{ type: AGENT_TOOLSET, configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] }] }, 'claude-code')).toBeUndefined();
    expect(issue({ ...docs, tools: [{ type: 'mcp_toolset', mcp_server_name: 'docs', default_config: { enabled: false }, configs: [{ name: 'lookup', enabled: true }] }] }, 'codex')).toBeUndefined();
    expect(issue({ model: { id: 'x', speed: 'fast' } }, 'codex')).toBeUndefined();
    expect(issue({ tools: [{ type: AGENT_TOOLSET, configs: [{ name: 'web_fetch', enabled: false }] }] }, 'pi')).toBeUndefined();
    // Codex and Pi hold every tool call, or none.
    expect(issue({ tools: [{ type: AGENT_TOOLSET, default_config: { permission_policy: { type: 'always_ask' } } }] }, 'codex')).toBeUndefined();
    expect(issue({ tools: [{ type: AGENT_TOOLSET, default_config: { permission_policy: { type: 'always_ask' } } }] }, 'pi')).toBeUndefined();
  });

  it('becomes a 400 naming the field under the given prefix', () => {
    expect(fieldOf(() => refuseConfigIssues([{ path: 'model.speed', message: 'no' }], 'agent'))).toBe('agent.model.speed');
    expect(() => refuseConfigIssues([])).not.toThrow();
  });
});

describe('the environment contract', () => {
  it('fills every field on create and merges an update field by field', () => {
    const created = environmentConfigFrom(parseWith(EnvironmentCreateParamsSchema, { name: 'e', config: { type: 'cloud', resources: { cpus: 1 }, packages: { apt: ['jq'] } } }).config);
    expect(created).toEqual({
      type: 'cloud',
      networking: { type: 'unrestricted' },
      packages: { type: 'packages', apt: ['jq'], cargo: [], gem: [], go: [], npm: [], pip: [] },
      harness: 'claude-code',
      image: null,
      network: 'egress',
      resources: { memory_mb: 2048, cpus: 1, pids: 512, workspace_mb: null },
      idle_timeout_seconds: 900,
      warm_pool_size: null,
      workspace_snapshots: { keep: 10, max_mb: 2048 },
      model: null,
    });
    const updated = environmentConfigFrom({ type: 'cloud', resources: { memory_mb: 512 }, packages: { npm: ['cowsay'] }, idle_timeout_seconds: 60 }, created);
    expect(updated).toMatchObject({ resources: { memory_mb: 512, cpus: 1, pids: 512 }, packages: { apt: ['jq'], npm: ['cowsay'] }, idle_timeout_seconds: 60 });
    expect(environmentConfigFrom({ type: 'cloud', packages: null, idle_timeout_seconds: null }, updated)).toMatchObject({ packages: { apt: [], npm: [] }, idle_timeout_seconds: 900 });
    const snapshots = environmentConfigFrom({ type: 'cloud', workspace_snapshots: { keep: 2 } }, created);
    expect(snapshots.workspace_snapshots).toEqual({ keep: 2, max_mb: 2048 });
    expect(environmentConfigFrom({ type: 'cloud', workspace_snapshots: { max_mb: 64 } }, snapshots).workspace_snapshots).toEqual({ keep: 2, max_mb: 64 });
    expect(environmentConfigFrom({ type: 'cloud', workspace_snapshots: null }, snapshots).workspace_snapshots).toEqual({ keep: 10, max_mb: 2048 });
  });

  it('bounds workspace_snapshots: keep 0-64 (0: off), max_mb 1-1048576', () => {
    expect(fieldOf(() => parseWith(EnvironmentCreateParamsSchema, { name: 'e', config: { type: 'cloud', workspace_snapshots: { keep: 65 } } }))).toBe('config.workspace_snapshots.keep');
    expect(fieldOf(() => parseWith(EnvironmentCreateParamsSchema, { name: 'e', config: { type: 'cloud', workspace_snapshots: { max_mb: 0 } } }))).toBe('config.workspace_snapshots.max_mb');
    expect(fieldOf(() => parseWith(EnvironmentCreateParamsSchema, { name: 'e', config: { type: 'cloud', workspace_snapshots: { every: 1 } } }))).toBe('config.workspace_snapshots.every');
    expect(environmentConfigFrom(parseWith(EnvironmentCreateParamsSchema, { name: 'e', config: { type: 'cloud', workspace_snapshots: { keep: 0 } } }).config).workspace_snapshots.keep).toBe(0);
  });

  it('refuses package names that are not registry names (options, paths, URLs)', () => {
    for (const bad of ['-y', '../x', 'https://evil/x.tgz', 'git+ssh://x', 'a b']) {
      expect(fieldOf(() => parseWith(EnvironmentCreateParamsSchema, { name: 'e', config: { type: 'cloud', packages: { npm: [bad] } } }))).toBe('config.packages.npm.0');
    }
  });

  it('loads a record stored by the previous release: permission_mode and model.model dropped, warm_pool_size added, a short idle timeout raised', () => {
    const previous = {
      type: 'cloud',
      networking: { type: 'unrestricted' },
      packages: { type: 'packages', apt: [], cargo: [], gem: [], go: [], npm: [], pip: [] },
      harness: 'pi',
      image: null,
      network: 'host',
      resources: { memory_mb: 1024, cpus: 1, pids: 256 },
      idle_timeout_seconds: 0,
      permission_mode: 'always_allow',
      model: { base_url: 'https://models.local', model: 'claude-x' },
    };
    const { permission_mode: _dropped, ...kept } = previous;
    expect(readEnvironmentConfig(previous)).toEqual({
      ...kept,
      idle_timeout_seconds: 10,
      warm_pool_size: null,
      workspace_snapshots: { keep: 10, max_mb: 2048 },
      model: { base_url: 'https://models.local', api_key_env: null },
    });
    expect(readEnvironmentConfig({ ...previous, model: null }).model).toBeNull();
    const current = environmentConfigFrom(null);
    expect(readEnvironmentConfig(current)).toEqual(current);
  });
});
