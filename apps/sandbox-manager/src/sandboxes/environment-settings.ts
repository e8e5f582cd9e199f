import { environmentConfigFrom, readEnvironmentConfig, type EnvironmentConfig } from '@berth/contracts';
import type { EnvironmentStore } from '@berth/ports';
import { EGRESS_RELAY_PORT, relayUrl, sandboxConfigOf, type SandboxConfig, type SandboxDefaults } from '@berth/sandbox-domain';

/**
 * Where a harness reaches its model: always its sandbox's egress relay (`baseUrl`), which forwards
 * to the environment's endpoint (`config.model.base_url`, else the server's) and adds the real key;
 * the harness's key variable (`apiKeyEnv`) only ever holds `MODEL_KEY_PLACEHOLDER`.
 */
export type ModelSettings = Readonly<{
  baseUrl: string;
  apiKeyEnv: string;
}>;

/** An environment as the manager uses it: its typed config, its sandbox (base image, before packages) and its model endpoint. */
export type EnvironmentSettings = Readonly<{ config: EnvironmentConfig; sandbox: SandboxConfig; model: ModelSettings }>;

/** The variable the harness finds its key in (Codex and Pi name it in their provider config). */
export const HARNESS_KEY_ENV = 'BERTH_MODEL_API_KEY';
/** What that variable holds in a sandbox: not a key. The egress replaces it with the real one. */
export const MODEL_KEY_PLACEHOLDER = 'berth-egress-adds-the-real-key';

/**
 * Reads an environment's settings through the config contract (which also upgrades a record of
 * the previous release). The owner is not checked: the manager acts for the kernel, which already
 * scoped the session to its owner.
 */
export class EnvironmentSettingsReader {
  constructor(
    private readonly environments: EnvironmentStore,
    private readonly defaults: Readonly<{ sandbox: SandboxDefaults }>,
  ) {}

  async read(ownerId: string, environmentId: string): Promise<EnvironmentSettings> {
    const env = await this.environments.get(ownerId, environmentId);
    const config = env === null ? environmentConfigFrom(null) : readEnvironmentConfig(env.config);
    // A `host` sandbox's relay port is its own (see `relayPortOf`); this is the one of every other sandbox.
    return { config, sandbox: sandboxConfigOf(config, this.defaults.sandbox), model: { baseUrl: relayUrl(EGRESS_RELAY_PORT), apiKeyEnv: HARNESS_KEY_ENV } };
  }
}
