import { EFFORT_LEVELS, readAgentConfig, type AgentConfig } from '@berth/contracts';
import { intOption, requiredOption, type OptionValues } from '../args';
import { UsageError } from '../exit-codes';
import { details, display, table } from '../output/format';
import { customToolsSummary, mcpSummary, TOOL_OPTIONS, toolOptionsGiven, toolsFromOptions, toolsSummary } from './agent-tools';
import { str, type Command, type Output } from './command';

type Agent = AgentConfig & { id: string; name: string; version: number; created_at: string; updated_at: string; archived_at: string | null };

const agentOutput = (a: Agent): Output => {
  const config = readAgentConfig(a);
  return {
    json: a,
    human: details([
      ['id', a.id],
      ['name', a.name],
      ['model', [config.model.id, config.model.effort && `effort ${config.model.effort.type}`, config.model.speed && `speed ${config.model.speed}`].filter(Boolean).join(', ')],
      ['version', a.version],
      ['description', config.description],
      ['system', config.system],
      ['tools', toolsSummary(config)],
      ['mcp servers', mcpSummary(config)],
      ['custom tools', customToolsSummary(config)],
      ['created', a.created_at],
      ['updated', a.updated_at],
      ['archived', a.archived_at],
    ]),
  };
};

const fields = {
  name: { type: 'string', help: 'display name' },
  model: { type: 'string', help: 'model id, e.g. claude-sonnet-4-5' },
  effort: { type: 'string', help: `model effort: ${EFFORT_LEVELS.join(' | ')}` },
  speed: { type: 'string', help: 'model speed: standard | fast' },
  system: { type: 'string', help: 'system prompt' },
  description: { type: 'string', help: 'description' },
  ...TOOL_OPTIONS,
} as const;

/** `model` as the API takes it: the id alone, or `{id, effort, speed}` when either is set. */
function modelFromOptions(o: OptionValues, currentId: string | undefined): unknown {
  const id = str(o, 'model') ?? currentId;
  const effort = str(o, 'effort');
  const speed = str(o, 'speed');
  if (effort !== undefined && !(EFFORT_LEVELS as readonly string[]).includes(effort)) throw new UsageError(`--effort must be one of ${EFFORT_LEVELS.join(', ')}`);
  if (speed !== undefined && speed !== 'standard' && speed !== 'fast') throw new UsageError('--speed must be standard or fast');
  if (effort === undefined && speed === undefined) return str(o, 'model');
  if (id === undefined) throw new UsageError('--effort and --speed need --model');
  return { id, ...(effort ? { effort } : {}), ...(speed ? { speed } : {}) };
}

export const agentCommands: readonly Command[] = [
  {
    name: ['agents', 'create'],
    args: [],
    options: fields,
    summary: 'create an agent (version 1), with the built-in toolset unless --no-toolset',
    run: async ({ api }, _a, o) => {
      const body = {
        name: requiredOption(o, 'name'),
        model: modelFromOptions({ ...o, model: requiredOption(o, 'model') }, undefined),
        system: str(o, 'system'),
        description: str(o, 'description'),
        ...toolsFromOptions(o, null),
      };
      return agentOutput(await api.request<Agent>('POST', '/v1/agents', { body }));
    },
  },
  {
    name: ['agents', 'list'],
    args: [],
    options: { 'include-archived': { type: 'boolean', help: 'also list archived agents' }, limit: { type: 'string', help: 'page size' } },
    summary: 'list agents',
    run: async ({ api }, _a, o) => {
      const page = await api.request<{ data: Agent[] }>('GET', '/v1/agents', { query: { limit: intOption(o, 'limit', 1), include_archived: o['include-archived'] ? true : undefined } });
      return {
        json: page,
        human: table(page.data, [
          { header: 'id', value: (a) => a.id },
          { header: 'name', value: (a) => a.name },
          { header: 'model', value: (a) => display(a.model?.id) },
          { header: 'version', value: (a) => `v${a.version}` },
          { header: 'archived', value: (a) => (a.archived_at ? 'yes' : '') },
        ]),
      };
    },
  },
  {
    name: ['agents', 'get'],
    args: ['agent'],
    options: { version: { type: 'string', help: 'a past version (default: latest)' } },
    summary: 'show an agent',
    run: async ({ api }, a, o) => agentOutput(await api.request<Agent>('GET', `/v1/agents/${a.agent}`, { query: { version: intOption(o, 'version', 1) } })),
  },
  {
    name: ['agents', 'update'],
    args: ['agent'],
    options: { ...fields, version: { type: 'string', help: 'expected current version (default: the latest)' } },
    summary: 'update an agent (creates a new version; tool options change the current tools)',
    run: async ({ api }, a, o) => {
      const expected = intOption(o, 'version', 1);
      const current = await api.request<Agent>('GET', `/v1/agents/${a.agent}`, { query: { version: expected } });
      const body = {
        version: expected ?? current.version,
        name: str(o, 'name'),
        model: modelFromOptions(o, current.model.id),
        system: str(o, 'system'),
        description: str(o, 'description'),
        ...(toolOptionsGiven(o) ? toolsFromOptions(o, readAgentConfig(current)) : {}),
      };
      return agentOutput(await api.request<Agent>('POST', `/v1/agents/${a.agent}`, { body }));
    },
  },
  {
    name: ['agents', 'archive'],
    args: ['agent'],
    options: {},
    summary: 'archive an agent (read-only from then on)',
    run: async ({ api }, a) => agentOutput(await api.request<Agent>('POST', `/v1/agents/${a.agent}/archive`)),
  },
];
