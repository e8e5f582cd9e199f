import { HarnessKindSchema, readEnvironmentConfig, SANDBOX_NETWORKS, type EnvironmentConfig } from '@berth/contracts';
import { intOption, requiredOption, type OptionSpec, type OptionValues } from '../args';
import { UsageError } from '../exit-codes';
import { details, display, table } from '../output/format';
import { str, type Command, type Output } from './command';

type Environment = { id: string; name: string; description: string | null; config: EnvironmentConfig; created_at: string; archived_at: string | null };

const HARNESSES = HarnessKindSchema.options;

const packagesLine = (c: EnvironmentConfig): string => {
  if (c.type !== 'cloud') return '-';
  const lists = (['apt', 'npm', 'pip', 'cargo', 'gem', 'go'] as const).filter((m) => c.packages[m].length > 0).map((m) => `${m}: ${c.packages[m].join(' ')}`);
  return lists.length > 0 ? lists.join('; ') : 'none';
};

const envOutput = (e: Environment): Output => {
  const c = readEnvironmentConfig(e.config);
  return {
    json: e,
    human: details([
      ['id', e.id],
      ['name', e.name],
      ['description', e.description],
      ['harness', c.harness],
      ['image', c.image ?? '(the sandbox-manager default)'],
      ['network', c.network],
      ['packages', packagesLine(c)],
      ['idle timeout', `${c.idle_timeout_seconds} s`],
      ['warm pool', c.warm_pool_size ?? '(the sandbox-manager default)'],
      ['resources', `${c.resources.memory_mb} MiB, ${c.resources.cpus} CPUs, ${c.resources.pids} pids`],
      ['model endpoint', c.model === null ? '(the sandbox-manager default)' : `${c.model.base_url ?? 'default URL'}, key ${c.model.api_key_env ?? 'BERTH_MODEL_API_KEY'}`],
      ['created', e.created_at],
      ['archived', e.archived_at],
    ]),
  };
};

function oneOf(value: string | undefined, allowed: readonly string[], name: string): string | undefined {
  if (value !== undefined && !allowed.includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value;
}

function numberOption(values: OptionValues, name: string): number | undefined {
  const raw = str(values, name);
  if (raw === undefined) return undefined;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new UsageError(`--${name} must be a number, got "${raw}"`);
  return Number(raw);
}

const listOption = (values: OptionValues, name: string): string[] | undefined => (Array.isArray(values[name]) ? (values[name] as string[]) : undefined);

const CONFIG_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  harness: { type: 'string', help: HARNESSES.join(' | ') },
  image: { type: 'string', help: 'sandbox image (default: the harness image)' },
  network: { type: 'string', help: 'sandbox network: egress (default: only what config.networking allows), none (only the model), host (operator opt-in)' },
  apt: { type: 'string', multiple: true, help: 'a Debian package to install in the sandbox image' },
  npm: { type: 'string', multiple: true, help: 'an npm package to install globally in the sandbox image' },
  pip: { type: 'string', multiple: true, help: 'a Python package (wheel) to install in the sandbox image' },
  'idle-timeout': { type: 'string', help: 'seconds an idle sandbox is kept (its lease) before it is released' },
  'warm-pool': { type: 'string', help: 'started sandboxes kept ready for new sessions' },
  'memory-mb': { type: 'string', help: 'sandbox memory limit' },
  cpus: { type: 'string', help: 'sandbox CPU limit (e.g. 1.5)' },
  pids: { type: 'string', help: 'sandbox process limit' },
  'model-url': { type: 'string', help: 'model endpoint for the harness (default: the sandbox-manager\'s)' },
  'model-key-env': { type: 'string', help: 'BERTH_MODEL_KEY_<NAME>: the sandbox-manager variable holding its key' },
};

/** The `config` the options describe (fields not given are left out: an update keeps them). */
function configFromOptions(o: OptionValues, type: EnvironmentConfig['type'] = 'cloud'): Record<string, unknown> {
  const resources = { memory_mb: intOption(o, 'memory-mb', 1), cpus: numberOption(o, 'cpus'), pids: intOption(o, 'pids', 1) };
  const packages = { apt: listOption(o, 'apt'), npm: listOption(o, 'npm'), pip: listOption(o, 'pip') };
  const model = { base_url: str(o, 'model-url'), api_key_env: str(o, 'model-key-env') };
  const given = (obj: Record<string, unknown>) => (Object.values(obj).some((v) => v !== undefined) ? obj : undefined);
  return {
    type,
    harness: oneOf(str(o, 'harness'), HARNESSES, 'harness'),
    image: str(o, 'image'),
    network: oneOf(str(o, 'network'), SANDBOX_NETWORKS, 'network'),
    packages: given(packages),
    idle_timeout_seconds: intOption(o, 'idle-timeout', 1),
    warm_pool_size: intOption(o, 'warm-pool', 0),
    resources: given(resources),
    model: given(model),
  };
}

export const envCommands: readonly Command[] = [
  {
    name: ['envs', 'create'],
    args: [],
    options: { name: { type: 'string', help: 'display name' }, description: { type: 'string', help: 'description' }, ...CONFIG_OPTIONS },
    summary: 'create an environment',
    run: async ({ api }, _a, o) =>
      envOutput(await api.request<Environment>('POST', '/v1/environments', { body: { name: requiredOption(o, 'name'), description: str(o, 'description'), config: configFromOptions(o) } })),
  },
  {
    name: ['envs', 'update'],
    args: ['environment'],
    options: { name: { type: 'string', help: 'display name' }, description: { type: 'string', help: 'description' }, ...CONFIG_OPTIONS },
    summary: 'update an environment (given fields change, a package list given replaces that list; new sandboxes use it)',
    run: async ({ api }, a, o) => {
      const current = await api.request<Environment>('GET', `/v1/environments/${a.environment}`);
      const body = { name: str(o, 'name'), description: str(o, 'description'), config: configFromOptions(o, current.config.type) };
      return envOutput(await api.request<Environment>('POST', `/v1/environments/${a.environment}`, { body }));
    },
  },
  {
    name: ['envs', 'list'],
    args: [],
    options: { 'include-archived': { type: 'boolean', help: 'also list archived environments' }, limit: { type: 'string', help: 'page size' } },
    summary: 'list environments',
    run: async ({ api }, _a, o) => {
      const page = await api.request<{ data: Environment[] }>('GET', '/v1/environments', { query: { limit: intOption(o, 'limit', 1), include_archived: o['include-archived'] ? true : undefined } });
      return {
        json: page,
        human: table(page.data, [
          { header: 'id', value: (e) => e.id },
          { header: 'name', value: (e) => e.name },
          { header: 'harness', value: (e) => display(e.config.harness) },
          { header: 'idle timeout', value: (e) => `${display(e.config.idle_timeout_seconds)} s` },
          { header: 'archived', value: (e) => (e.archived_at ? 'yes' : '') },
        ]),
      };
    },
  },
  {
    name: ['envs', 'get'],
    args: ['environment'],
    options: {},
    summary: 'show an environment',
    run: async ({ api }, a) => envOutput(await api.request<Environment>('GET', `/v1/environments/${a.environment}`)),
  },
  {
    name: ['envs', 'archive'],
    args: ['environment'],
    options: {},
    summary: 'archive an environment',
    run: async ({ api }, a) => envOutput(await api.request<Environment>('POST', `/v1/environments/${a.environment}/archive`)),
  },
  {
    name: ['envs', 'delete'],
    args: ['environment'],
    options: {},
    summary: 'delete an environment',
    run: async ({ api }, a) => {
      const res = await api.request<unknown>('DELETE', `/v1/environments/${a.environment}`);
      return { json: res, human: `deleted ${a.environment}` };
    },
  },
];
