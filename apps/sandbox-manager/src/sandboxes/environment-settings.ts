import type { EnvironmentStore } from '@berth/ports';
import { DEFAULT_SANDBOX_CONFIG, EGRESS_RELAY_PORT, relayUrl, sandboxConfigFrom, type SandboxConfig } from '@berth/sandbox-domain';
import type { ModelDefaults } from '../config/manager.config';

/**
 * Where a harness reaches its model: always its sandbox's egress relay (`baseUrl`), which forwards
 * to the real endpoint and adds the real key; the harness's key variable (`apiKeyEnv`) only ever
 * holds `MODEL_KEY_PLACEHOLDER`.
 */
export type ModelSettings = Readonly<{
  baseUrl: string;
  apiKeyEnv: string;
  model: string | null;
}>;

export type EnvironmentSettings = Readonly<{ sandbox: SandboxConfig; model: ModelSettings }>;

/** The variable the harness finds its key in (Codex and Pi name it in their provider config). */
export const HARNESS_KEY_ENV = 'BERTH_MODEL_API_KEY';
/** What that variable holds in a sandbox: not a key. The egress replaces it with the real one. */
export const MODEL_KEY_PLACEHOLDER = 'berth-egress-adds-the-real-key';

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
    private readonly defaults: Readonly<{ image: string; model: ModelDefaults; warmPoolSize?: number }>,
  ) {}

  async read(ownerId: string, environmentId: string): Promise<EnvironmentSettings> {
    const env = await this.environments.get(ownerId, environmentId);
    const config = record(env?.config);
    const model = record(config['model']);
    return {
      sandbox: sandboxConfigFrom(config, {
        ...DEFAULT_SANDBOX_CONFIG,
        image: this.defaults.image,
        warmPool: { ...DEFAULT_SANDBOX_CONFIG.warmPool, size: this.defaults.warmPoolSize ?? DEFAULT_SANDBOX_CONFIG.warmPool.size },
      }),
      // A `host` sandbox's relay port is its own (see `relayPortOf`); this is the one of every other sandbox.
      model: { baseUrl: relayUrl(EGRESS_RELAY_PORT), apiKeyEnv: HARNESS_KEY_ENV, model: text(model['model']) ?? this.defaults.model.model },
    };
  }
}
