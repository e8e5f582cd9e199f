import type { EnvironmentStore } from '@berth/ports';
import { DEFAULT_SANDBOX_CONFIG, sandboxConfigFrom, type SandboxConfig } from '@berth/sandbox-domain';
import type { ModelDefaults } from '../config/manager.config';

/** Where a harness reaches its model: the server-wide default, overridden per environment. */
export type ModelSettings = Readonly<{
  baseUrl: string | null;
  /** Name of the secret holding the key (the manager's own `BERTH_MODEL_API_KEY`, or an env var the environment names). */
  apiKeyEnv: string;
  model: string | null;
}>;

export type EnvironmentSettings = Readonly<{ sandbox: SandboxConfig; model: ModelSettings }>;

export const DEFAULT_KEY_SECRET = 'BERTH_MODEL_API_KEY';

/**
 * The only process variables an environment may name as its model key. Anything else of the
 * manager's environment (store URL, NATS credentials) must never reach a harness.
 */
export const isModelKeySecretName = (name: string): boolean => name === DEFAULT_KEY_SECRET || /^BERTH_MODEL_KEY_[A-Z0-9_]{1,100}$/.test(name);

type Raw = Readonly<Record<string, unknown>>;
const record = (v: unknown): Raw => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Raw) : {});
const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);

/**
 * Reads an environment's sandbox and model settings. The environment's owner is not checked:
 * the manager acts for the kernel, which already scoped the session to its owner.
 */
export class EnvironmentSettingsReader {
  constructor(
    private readonly environments: EnvironmentStore,
    private readonly defaults: Readonly<{ image: string; model: ModelDefaults; warmPoolSize?: number; workspaceBytes?: number }>,
  ) {}

  async read(ownerId: string, environmentId: string): Promise<EnvironmentSettings> {
    const env = await this.environments.get(ownerId, environmentId);
    const config = record(env?.config);
    const model = record(config['model']);
    return {
      sandbox: sandboxConfigFrom(config, {
        ...DEFAULT_SANDBOX_CONFIG,
        image: this.defaults.image,
        workspaceBytes: this.defaults.workspaceBytes ?? DEFAULT_SANDBOX_CONFIG.workspaceBytes,
        warmPool: { ...DEFAULT_SANDBOX_CONFIG.warmPool, size: this.defaults.warmPoolSize ?? DEFAULT_SANDBOX_CONFIG.warmPool.size },
      }),
      model: {
        baseUrl: text(model['base_url']) ?? this.defaults.model.baseUrl,
        apiKeyEnv: text(model['api_key_env']) ?? DEFAULT_KEY_SECRET,
        model: text(model['model']) ?? this.defaults.model.model,
      },
    };
  }
}
