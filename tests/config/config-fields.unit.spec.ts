import {
  AGENT_TOOLSET,
  agentConfigFromCreate,
  agentConfigIssues,
  agentConfigIssuesFor,
  AgentCreateParamsSchema,
  AgentUpdateParamsSchema,
  environmentConfigFrom,
  environmentConfigIssues,
  EnvironmentCreateParamsSchema,
  EnvironmentUpdateParamsSchema,
  HarnessKindSchema,
  parseWith,
  type AgentCreateParams,
  type EnvironmentConfig,
  type EnvironmentCreateParams,
  type HarnessKind,
} from '@berth/contracts';
import { harnessAdapterFor } from '@berth/harness';
import { NO_MIRRORS, packageImageRecipe, sandboxConfigOf } from '@berth/sandbox-domain';
import { modelEndpointFrom, networkingFrom } from '@berth/egress-domain';
import { schemaFields } from './schema-fields';

/**
 * Every field the agent and environment schemas accept is either applied (and this test shows
 * where: the harness's plan, the sandbox, the lease, the image, the stored record) or refused with
 * a 400 naming it. A field added to a schema without a row here fails the first test of its block.
 */

type Refused = Readonly<{ refused: string; sample: unknown }>;
type Applied = Readonly<{ applied: string; sample: unknown; against?: unknown }>;
type Effect = Refused | Applied;

const HARNESSES = HarnessKindSchema.options;
const refused = (why: string, sample: unknown): Refused => ({ refused: why, sample });
const applied = (where: string, sample: unknown, against?: unknown): Applied => ({ applied: where, sample, against });

// ---- Agents

const BASE_AGENT: AgentCreateParams = { name: 'sweep', model: 'claude-sonnet-4-5', tools: [{ type: AGENT_TOOLSET }] };
const agent = (over: Partial<AgentCreateParams>): AgentCreateParams => ({ ...BASE_AGENT, ...over });
const toolset = (over: Record<string, unknown>) => agent({ tools: [{ type: AGENT_TOOLSET, ...over } as never] });
const toolConfig = (config: Record<string, unknown>) => toolset({ configs: [{ name: 'web_fetch', ...config }] });
const DOCS = { type: 'url', name: 'docs', url: 'https://mcp.example/mcp' } as const;
const mcp = (over: Record<string, unknown> = {}) => agent({ mcp_servers: [DOCS], tools: [{ type: AGENT_TOOLSET }, { type: 'mcp_toolset', mcp_server_name: 'docs', ...over } as never] });
const custom = agent({ tools: [{ type: 'custom', name: 'weather', description: 'Gets the weather', input_schema: { type: 'object' } }] });
const skill = agent({ skills: [{ type: 'anthropic', skill_id: 'xlsx', version: '1' }] });
const aws = agent({ execution_identity: { type: 'aws_role', role_arn: 'arn:aws:iam::1:role/x' } });

const AGENT_FIELDS: Readonly<Record<string, Effect>> = {
  name: applied('record: returned by the API', agent({ name: 'renamed' })),
  model: applied('harness: the model id it asks for', agent({ model: 'claude-opus-4-7' })),
  'model.id': applied('harness: the model id it asks for', agent({ model: { id: 'claude-opus-4-7' } })),
  'model.effort': applied('harness: its effort setting', agent({ model: { id: 'claude-sonnet-4-5', effort: 'high' } })),
  'model.effort.type': applied('harness: its effort setting', agent({ model: { id: 'claude-sonnet-4-5', effort: { type: 'low' } } })),
  'model.inference_geo': refused('inference_geo is not supported', agent({ model: { id: 'claude-sonnet-4-5', inference_geo: 'eu' } })),
  'model.speed': applied('harness: its fast mode (Codex service tier)', agent({ model: { id: 'claude-sonnet-4-5', speed: 'fast' } })),
  description: applied('record: returned by the API', agent({ description: 'a description' })),
  system: applied('harness: appended to its system prompt', agent({ system: 'You are a pirate.' })),
  'execution_identity<service_account>.type': applied('record: the default identity', agent({ execution_identity: { type: 'service_account' } })),
  'execution_identity<aws_role>.type': refused('aws_role is not supported', aws),
  'execution_identity<aws_role>.role_arn': refused('aws_role is not supported', aws),
  multiagent: refused('multiagent is not supported', agent({ multiagent: { type: 'coordinator', agents: [] } })),
  'tools[]<agent_toolset_20260401>.type': applied('harness: its built-in tools', toolset({}), agent({ tools: [] })),
  'tools[]<agent_toolset_20260401>.default_config.enabled': applied('harness: its built-in tools', toolset({ default_config: { enabled: false } })),
  'tools[]<agent_toolset_20260401>.default_config.permission_policy.type': applied('harness: tool confirmation', toolset({ default_config: { permission_policy: { type: 'always_ask' } } })),
  'tools[]<agent_toolset_20260401>.configs[].name': applied('harness: its built-in tools', toolset({ configs: [{ name: 'bash', enabled: false }] })),
  'tools[]<agent_toolset_20260401>.configs[].type': applied('harness: its built-in tools', toolset({ configs: [{ name: 'bash', type: 'bash', enabled: false }] })),
  'tools[]<agent_toolset_20260401>.configs[].enabled': applied('harness: its built-in tools', toolset({ configs: [{ name: 'read', enabled: false }] })),
  'tools[]<agent_toolset_20260401>.configs[].permission_policy.type': applied('harness: tool confirmation', toolset({ configs: [{ name: 'bash', permission_policy: { type: 'always_ask' } }] })),
  'tools[]<agent_toolset_20260401>.configs[].allowed_domains[]': refused('allowed_domains is not supported', toolConfig({ allowed_domains: ['example.com'] })),
  'tools[]<agent_toolset_20260401>.configs[].blocked_domains[]': refused('blocked_domains is not supported', toolConfig({ blocked_domains: ['example.com'] })),
  'tools[]<agent_toolset_20260401>.configs[].max_content_tokens': refused('max_content_tokens is not supported', toolConfig({ max_content_tokens: 100 })),
  'tools[]<agent_toolset_20260401>.configs[].url_sources': refused('url_sources is not supported', toolConfig({ url_sources: { user_input: 'none' } })),
  'tools[]<agent_toolset_20260401>.configs[].user_location': refused('user_location is not supported', toolset({ configs: [{ name: 'web_search', user_location: { type: 'approximate' } }] })),
  'tools[]<mcp_toolset>.type': applied('harness: its MCP configuration', mcp()),
  'tools[]<mcp_toolset>.mcp_server_name': applied('harness: its MCP configuration', mcp()),
  'tools[]<mcp_toolset>.default_config.enabled': applied('harness: its MCP configuration', mcp({ default_config: { enabled: false } }), mcp()),
  'tools[]<mcp_toolset>.default_config.permission_policy.type': applied('harness: tool confirmation', mcp({ default_config: { permission_policy: { type: 'always_ask' } } }), mcp()),
  'tools[]<mcp_toolset>.configs[].name': applied('harness: its MCP configuration', mcp({ configs: [{ name: 'shout', enabled: false }] }), mcp()),
  'tools[]<mcp_toolset>.configs[].enabled': applied('harness: its MCP configuration', mcp({ configs: [{ name: 'shout', enabled: false }] }), mcp()),
  'tools[]<mcp_toolset>.configs[].permission_policy.type': applied('harness: tool confirmation', mcp({ configs: [{ name: 'lookup', permission_policy: { type: 'always_ask' } }] }), mcp()),
  'tools[]<custom>.type': applied('harness: the custom tools of the MCP server (Pi: the extension) Berth runs in the sandbox', custom),
  'tools[]<custom>.name': applied('harness: the custom tools of the MCP server (Pi: the extension) Berth runs in the sandbox', custom),
  'tools[]<custom>.description': applied('harness: the custom tools of the MCP server (Pi: the extension) Berth runs in the sandbox', custom),
  'tools[]<custom>.input_schema.type': applied('harness: the custom tools of the MCP server (Pi: the extension) Berth runs in the sandbox', custom),
  'mcp_servers[].type': applied('harness: its MCP configuration', mcp()),
  'mcp_servers[].name': applied('harness: its MCP configuration', mcp()),
  'mcp_servers[].url': applied('harness: its MCP configuration', agent({ mcp_servers: [{ ...DOCS, url: 'http://127.0.0.1:9/mcp' }], tools: mcp().tools }), mcp()),
  'skills[].type': refused('skills are not supported', skill),
  'skills[].skill_id': refused('skills are not supported', skill),
  'skills[].version': refused('skills are not supported', skill),
  metadata: applied('record: returned by the API', agent({ metadata: { team: 'a' } })),
};

const planOf = (params: AgentCreateParams, harness: HarnessKind): string => {
  const plan = harnessAdapterFor(harness).buildTurn({
    prompt: 'hello',
    agent: agentConfigFromCreate(params),
    resumeId: null,
    model: { baseUrl: 'http://model.local', apiKeyEnv: 'BERTH_MODEL_API_KEY' },
    cwd: '/workspace',
    home: '/home/agent',
  });
  return JSON.stringify({ argv: plan.argv, env: plan.env, files: plan.files, stdin: plan.stdinLines });
};

describe('every field the agent API accepts', () => {
  it('has a decision: applied (where) or refused', () => {
    const fields = [...new Set([...schemaFields(AgentCreateParamsSchema), ...schemaFields(AgentUpdateParamsSchema)])].filter((f) => f !== 'version');
    expect(fields.sort()).toEqual(Object.keys(AGENT_FIELDS).sort());
  });

  const rows = Object.entries(AGENT_FIELDS);
  it.each(rows.filter((r): r is [string, Refused] => 'refused' in r[1]))('%s is refused with a 400 that names it', (_field, effect) => {
    const config = agentConfigFromCreate(parseWith(AgentCreateParamsSchema, effect.sample));
    const [issue] = agentConfigIssues(config);
    expect(issue?.message).toContain(effect.refused);
    expect(issue?.path).toMatch(/^(model|skills|multiagent|execution_identity|tools\.\d+)/);
  });

  it.each(rows.filter((r): r is [string, Applied] => 'applied' in r[1] && r[1].applied.startsWith('harness')))(
    '%s changes what the harness runs, or the session create refuses it for that harness',
    (_field, effect) => {
      const sample = parseWith(AgentCreateParamsSchema, effect.sample);
      const against = parseWith(AgentCreateParamsSchema, effect.against ?? BASE_AGENT);
      expect(agentConfigIssues(agentConfigFromCreate(sample))).toEqual([]);
      const outcomes = HARNESSES.map((harness) => {
        if (agentConfigIssuesFor(agentConfigFromCreate(sample), harness).length > 0) return 'refused';
        // Without the field this harness would refuse the agent: the field is what makes it run.
        if (agentConfigIssuesFor(agentConfigFromCreate(against), harness).length > 0) return 'applied';
        return planOf(sample, harness) === planOf(against, harness) ? `no effect on ${harness}` : 'applied';
      });
      expect(outcomes.filter((o) => o.startsWith('no effect'))).toEqual([]);
      expect(outcomes).toContain('applied');
    },
  );

  it.each(rows.filter((r): r is [string, Applied] => 'applied' in r[1] && r[1].applied.startsWith('record')))('%s is stored and returned as given', (field, effect) => {
    const params = parseWith(AgentCreateParamsSchema, effect.sample);
    const stored = { name: params.name, ...agentConfigFromCreate(params) } as Record<string, unknown>;
    const key = field.split(/[.<]/)[0] as keyof typeof params;
    expect(stored[key]).toEqual(params[key]);
  });
});

// ---- Environments

const env = (config: Record<string, unknown>, type = 'cloud'): EnvironmentCreateParams => ({ name: 'sweep', config: { type, ...config } as never });
const limited = env({ networking: { type: 'limited', allowed_hosts: ['example.com'], allow_mcp_servers: true, allow_package_managers: true } });

const SANDBOX_FIELDS: Readonly<Record<string, Effect>> = {
  harness: applied('session: the harness its turns run', env({ harness: 'codex' })),
  image: applied('sandbox: container image', env({ image: 'registry.local/custom:1' })),
  network: applied('sandbox: container network', env({ network: 'none' })),
  'resources.memory_mb': applied('sandbox: container memory limit', env({ resources: { memory_mb: 512 } })),
  'resources.cpus': applied('sandbox: container CPU limit', env({ resources: { cpus: 0.5 } })),
  'resources.pids': applied('sandbox: container pids limit', env({ resources: { pids: 64 } })),
  'resources.workspace_mb': applied("sandbox: the session workspace's size limit", env({ resources: { workspace_mb: 512 } })),
  'workspace_snapshots.keep': applied('snapshots: per-turn workspace snapshots kept for forks', env({ workspace_snapshots: { keep: 3, max_mb: 2048 } })),
  'workspace_snapshots.max_mb': applied('snapshots: per-turn workspace snapshots kept for forks', env({ workspace_snapshots: { keep: 10, max_mb: 100 } })),
  idle_timeout_seconds: applied('lease: expires_at and release', env({ idle_timeout_seconds: 60 })),
  warm_pool_size: applied('pool: warm sandboxes kept', env({ warm_pool_size: 2 })),
  'model.base_url': applied('model endpoint: where the harness reaches its model', env({ model: { base_url: 'https://models.local' } })),
  'model.api_key_env': applied('model endpoint: the key the harness gets', env({ model: { api_key_env: 'BERTH_MODEL_KEY_TEAM' } })),
  'model.model': refused("the agent's `model`", env({ model: { model: 'claude-x' } })),
  permission_mode: refused('set per tool on the agent', env({ permission_mode: 'always_ask' })),
};

const ENVIRONMENT_FIELDS: Readonly<Record<string, Effect>> = {
  name: applied('record: returned by the API', { name: 'renamed' }),
  description: applied('record: returned by the API', { name: 'd', description: 'text' }),
  metadata: applied('record: returned by the API', { name: 'm', metadata: { team: 'a' } }),
  scope: refused('only organization scope', { name: 's', scope: 'account' }),
  'config<cloud>.type': applied('record: the Managed Agents config type', env({})),
  'config<cloud>.networking<unrestricted>.type': applied('record: the default (the sandbox network decides what is reachable)', env({ networking: { type: 'unrestricted' } })),
  'config<cloud>.networking<limited>.type': applied('egress: what the sandbox may reach', limited),
  'config<cloud>.networking<limited>.allowed_hosts[]': applied('egress: what the sandbox may reach', limited),
  'config<cloud>.networking<limited>.allow_mcp_servers': applied('egress: what the sandbox may reach', limited),
  'config<cloud>.networking<limited>.allow_package_managers': applied('egress: what the sandbox may reach', limited),
  'config<cloud>.packages.type': applied('record: the Managed Agents packages type', env({ packages: { type: 'packages' } })),
  'config<cloud>.packages.apt[]': applied('image: installed when the sandbox image is built', env({ packages: { apt: ['jq'] } })),
  'config<cloud>.packages.npm[]': applied('image: installed when the sandbox image is built', env({ packages: { npm: ['cowsay'] } })),
  'config<cloud>.packages.pip[]': applied('image: installed when the sandbox image is built', env({ packages: { pip: ['requests'] } })),
  'config<cloud>.packages.cargo[]': refused('cargo packages are not supported', env({ packages: { cargo: ['ripgrep'] } })),
  'config<cloud>.packages.gem[]': refused('gem packages are not supported', env({ packages: { gem: ['rake'] } })),
  'config<cloud>.packages.go[]': refused('go packages are not supported', env({ packages: { go: ['golang.org/x/tools/gopls@latest'] } })),
  'config<self_hosted>.type': applied('record: the same sandbox as cloud, without networking or packages', env({}, 'self_hosted')),
  ...Object.fromEntries(Object.entries(SANDBOX_FIELDS).map(([f, e]) => [`config<cloud>.${f}`, e])),
  ...Object.fromEntries(
    Object.entries(SANDBOX_FIELDS).map(([f, e]) => [`config<self_hosted>.${f}`, { ...e, sample: { ...(e.sample as object), config: { ...(e.sample as EnvironmentCreateParams).config, type: 'self_hosted' } } }]),
  ),
};

const configOf = (sample: unknown): EnvironmentConfig => environmentConfigFrom(parseWith(EnvironmentCreateParamsSchema, sample).config);
const SERVER_MODEL = { baseUrl: 'http://default.local', trustedHosts: [] };

/** What each kind of effect looks like for the manager: the value it derives from the config. */
const EFFECT_PROBES: Readonly<Record<string, (config: EnvironmentConfig) => unknown>> = {
  session: (c) => c.harness,
  sandbox: (c) => {
    const s = sandboxConfigOf(c);
    return [s.image, s.network, s.memoryBytes, s.nanoCpus, s.pidsLimit, s.workspaceBytes];
  },
  lease: (c) => sandboxConfigOf(c).idle,
  snapshots: (c) => sandboxConfigOf(c).snapshots,
  pool: (c) => sandboxConfigOf(c).warmPool,
  // The egress sends the sandbox's model requests there, with that key.
  'model endpoint': (c) => modelEndpointFrom(c, SERVER_MODEL),
  // The egress lets the sandbox reach what this allows.
  egress: (c) => networkingFrom(c),
  image: (c) => (c.type === 'cloud' ? packageImageRecipe({ base: 'berth/harness:latest', packages: c.packages, environmentId: 'env_x', allowedHosts: [], mirrors: NO_MIRRORS }) : null),
};

describe('every field the environment API accepts', () => {
  it('has a decision: applied (where) or refused', () => {
    const fields = [...new Set([...schemaFields(EnvironmentCreateParamsSchema), ...schemaFields(EnvironmentUpdateParamsSchema)])];
    expect(fields.sort()).toEqual(Object.keys(ENVIRONMENT_FIELDS).sort());
  });

  const rows = Object.entries(ENVIRONMENT_FIELDS);
  it.each(rows.filter((r): r is [string, Refused] => 'refused' in r[1]))('%s is refused with a 400 that names it', (field, effect) => {
    const named = field.replace(/<[^>]*>/g, '').replace(/\[\]/g, '');
    let message = '';
    let path = '';
    try {
      const issues = environmentConfigIssues(configOf(effect.sample));
      message = issues[0]?.message ?? '';
      path = issues[0]?.path ?? '';
    } catch (error) {
      message = (error as Error).message;
      path = (error as { field?: string }).field ?? '';
    }
    expect(message).toContain(effect.refused);
    expect(named.startsWith(path) || path.startsWith(named)).toBe(true);
  });

  it.each(rows.filter((r): r is [string, Applied] => 'applied' in r[1] && !r[1].applied.startsWith('record')))('%s takes effect where the manager applies it', (_field, effect) => {
    const kind = effect.applied.split(':')[0] as string;
    const probe = EFFECT_PROBES[kind];
    const config = configOf(effect.sample);
    expect(environmentConfigIssues(config)).toEqual([]);
    expect(probe(config)).not.toEqual(probe(configOf({ name: 'base', config: { type: config.type } })));
  });

  it.each(rows.filter((r): r is [string, Applied] => 'applied' in r[1] && r[1].applied.startsWith('record')))('%s is accepted and stored', (_field, effect) => {
    const params = parseWith(EnvironmentCreateParamsSchema, effect.sample);
    expect(environmentConfigIssues(environmentConfigFrom(params.config))).toEqual([]);
  });
});
