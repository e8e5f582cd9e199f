import { intOption, requiredOption } from '../args';
import { UsageError } from '../exit-codes';
import { details, display, table } from '../output/format';
import { str, type Command, type Output } from './command';

type Environment = { id: string; name: string; description: string | null; config: Record<string, unknown>; created_at: string; archived_at: string | null };

const HARNESSES = ['claude-code', 'codex', 'pi', 'hermes', 'deepseek-harness'];
const PERMISSION_MODES = ['always_allow', 'always_ask'];

const envOutput = (e: Environment): Output => ({
  json: e,
  human: details([
    ['id', e.id],
    ['name', e.name],
    ['description', e.description],
    ['harness', e.config.harness],
    ['image', e.config.image],
    ['network', e.config.network],
    ['permissions', e.config.permission_mode],
    ['idle timeout', e.config.idle_timeout_seconds === undefined ? undefined : `${String(e.config.idle_timeout_seconds)} s`],
    ['resources', e.config.resources],
    ['created', e.created_at],
    ['archived', e.archived_at],
  ]),
});

function oneOf(value: string | undefined, allowed: readonly string[], name: string): string | undefined {
  if (value !== undefined && !allowed.includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value;
}

export const envCommands: readonly Command[] = [
  {
    name: ['envs', 'create'],
    args: [],
    options: {
      name: { type: 'string', help: 'display name' },
      description: { type: 'string', help: 'description' },
      harness: { type: 'string', help: HARNESSES.join(' | ') },
      image: { type: 'string', help: 'sandbox image (default: the harness image)' },
      network: { type: 'string', help: 'sandbox network: egress (default: only what config.networking allows), none (only the model), host (operator opt-in)' },
      'permission-mode': { type: 'string', help: PERMISSION_MODES.join(' | ') },
      'idle-timeout': { type: 'string', help: 'seconds before an idle sandbox is released' },
      'memory-mb': { type: 'string', help: 'sandbox memory limit' },
      cpus: { type: 'string', help: 'sandbox CPU limit' },
    },
    summary: 'create an environment',
    run: async ({ api }, _a, o) => {
      const memory = intOption(o, 'memory-mb', 1);
      const cpus = intOption(o, 'cpus', 1);
      const config = {
        type: 'cloud',
        harness: oneOf(str(o, 'harness'), HARNESSES, 'harness'),
        image: str(o, 'image'),
        network: str(o, 'network'),
        permission_mode: oneOf(str(o, 'permission-mode'), PERMISSION_MODES, 'permission-mode'),
        idle_timeout_seconds: intOption(o, 'idle-timeout', 1),
        resources: memory || cpus ? { memory_mb: memory, cpus } : undefined,
      };
      return envOutput(await api.request<Environment>('POST', '/v1/environments', { body: { name: requiredOption(o, 'name'), description: str(o, 'description'), config } }));
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
          { header: 'permissions', value: (e) => display(e.config.permission_mode) },
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
