import { intOption, requiredOption } from '../args';
import { details, display, table } from '../output/format';
import { str, type Command, type Output } from './command';

type Agent = { id: string; name: string; model: { id: string } | string; version: number; system: string | null; description: string | null; created_at: string; updated_at: string; archived_at: string | null };

const modelOf = (a: Agent) => (typeof a.model === 'string' ? a.model : a.model?.id);

const agentOutput = (a: Agent): Output => ({
  json: a,
  human: details([
    ['id', a.id],
    ['name', a.name],
    ['model', modelOf(a)],
    ['version', a.version],
    ['description', a.description],
    ['system', a.system],
    ['created', a.created_at],
    ['updated', a.updated_at],
    ['archived', a.archived_at],
  ]),
});

const fields = {
  name: { type: 'string', help: 'display name' },
  model: { type: 'string', help: 'model id, e.g. claude-sonnet-4-5' },
  system: { type: 'string', help: 'system prompt' },
  description: { type: 'string', help: 'description' },
} as const;

export const agentCommands: readonly Command[] = [
  {
    name: ['agents', 'create'],
    args: [],
    options: fields,
    summary: 'create an agent (version 1)',
    run: async ({ api }, _a, o) =>
      agentOutput(await api.request<Agent>('POST', '/v1/agents', { body: { name: requiredOption(o, 'name'), model: requiredOption(o, 'model'), system: str(o, 'system'), description: str(o, 'description') } })),
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
          { header: 'model', value: (a) => display(modelOf(a)) },
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
    summary: 'update an agent (creates a new version)',
    run: async ({ api }, a, o) => {
      const version = intOption(o, 'version', 1) ?? (await api.request<Agent>('GET', `/v1/agents/${a.agent}`)).version;
      const body = { version, name: str(o, 'name'), model: str(o, 'model'), system: str(o, 'system'), description: str(o, 'description') };
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
