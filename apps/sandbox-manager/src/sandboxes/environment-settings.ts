import { environmentConfigFrom, readEnvironmentConfig, type EnvironmentConfig } from '@berth/contracts';
import type { EnvironmentStore } from '@berth/ports';
import { sandboxConfigOf, type SandboxConfig, type SandboxDefaults } from '@berth/sandbox-domain';
import type { ModelDefaults } from '../config/manager.config';

/** Where a harness reaches its model: the server-wide default, overridden per environment. */
export type ModelSettings = Readonly<{
  baseUrl: string | null;
  /** Name of the secret holding the key (the manager's own `BERTH_MODEL_API_KEY`, or an env var the environment names). */
  apiKeyEnv: string;
}>;

/** An environment as the manager uses it: its typed config, its sandbox (base image, before packages) and its model endpoint. */
export type EnvironmentSettings = Readonly<{ config: EnvironmentConfig; sandbox: SandboxConfig; model: ModelSettings }>;

export const DEFAULT_KEY_SECRET = 'BERTH_MODEL_API_KEY';

/**
 * The only process variables an environment may name as its model key. Anything else of the
 * manager's environment (store URL, NATS credentials) must never reach a harness.
 */
export const isModelKeySecretName = (name: string): boolean => name === DEFAULT_KEY_SECRET || /^BERTH_MODEL_KEY_[A-Z0-9_]{1,100}$/.test(name);

/** The environment's `model` endpoint over the manager's defaults. */
export function modelSettingsOf(config: EnvironmentConfig, defaults: ModelDefaults): ModelSettings {
  return { baseUrl: config.model?.base_url ?? defaults.baseUrl, apiKeyEnv: config.model?.api_key_env ?? DEFAULT_KEY_SECRET };
}

/**
 * Reads an environment's settings through the config contract (which also upgrades a record of
 * the previous release). The owner is not checked: the manager acts for the kernel, which already
 * scoped the session to its owner.
 */
export class EnvironmentSettingsReader {
  constructor(
    private readonly environments: EnvironmentStore,
    private readonly defaults: Readonly<{ sandbox: SandboxDefaults; model: ModelDefaults }>,
  ) {}

  async read(ownerId: string, environmentId: string): Promise<EnvironmentSettings> {
    const env = await this.environments.get(ownerId, environmentId);
    const config = env === null ? environmentConfigFrom(null) : readEnvironmentConfig(env.config);
    return { config, sandbox: sandboxConfigOf(config, this.defaults.sandbox), model: modelSettingsOf(config, this.defaults.model) };
  }
}
