import { environmentConfigFrom, type EnvironmentConfig, type SandboxNetwork } from '@berth/contracts';

export type { SandboxNetwork } from '@berth/contracts';

export type IdlePolicy = Readonly<{
  /** The lease runs out this long after the last activity. */
  idleTimeoutSeconds: number;
  /** Hard cap on a sandbox's life whatever its activity; null = none. */
  maxLifetimeSeconds: number | null;
}>;

export type WarmPoolConfig = Readonly<{ size: number; ttlSeconds: number }>;

/** What a container is started with for one environment: its config, mapped to engine terms. */
export type SandboxConfig = Readonly<{
  image: string;
  network: SandboxNetwork;
  memoryBytes: number;
  nanoCpus: number;
  pidsLimit: number;
  readOnlyRoot: boolean;
  /** Most bytes a session's workspace (`/workspace` and `/mnt/session`) may hold. */
  workspaceBytes: number;
  idle: IdlePolicy;
  warmPool: WarmPoolConfig;
  /** Per-turn workspace snapshots a session keeps (0: none) and the bytes they may use together. */
  snapshots: Readonly<{ keep: number; maxBytes: number }>;
}>;

/** Server-wide settings: the image and pool size an environment leaves to the operator, and what no environment sets. */
export type SandboxDefaults = Readonly<{
  image: string;
  warmPoolSize: number;
  warmPoolTtlSeconds: number;
  readOnlyRoot: boolean;
  maxLifetimeSeconds: number | null;
  /** A session workspace's size limit where its environment sets none. */
  workspaceBytes: number;
}>;

export const DEFAULT_SANDBOX_DEFAULTS: SandboxDefaults = {
  image: 'berth/harness:latest',
  warmPoolSize: 0,
  warmPoolTtlSeconds: 30 * 60,
  readOnlyRoot: false,
  maxLifetimeSeconds: null,
  workspaceBytes: 10 * 1024 ** 3,
};

/**
 * An environment's sandbox settings in engine terms. The config is already validated (the API
 * parsed it with the contract, `readEnvironmentConfig` typed it): this only maps and fills in the
 * operator's defaults. `image` is the environment's base image; `packageImage` (when its packages
 * were built into one) replaces it.
 */
export function sandboxConfigOf(config: EnvironmentConfig, defaults: SandboxDefaults = DEFAULT_SANDBOX_DEFAULTS, packageImage: string | null = null): SandboxConfig {
  return {
    image: packageImage ?? config.image ?? defaults.image,
    network: config.network,
    memoryBytes: config.resources.memory_mb * 1024 * 1024,
    nanoCpus: Math.round(config.resources.cpus * 1e9),
    pidsLimit: config.resources.pids,
    readOnlyRoot: defaults.readOnlyRoot,
    workspaceBytes: config.resources.workspace_mb != null ? config.resources.workspace_mb * 1024 * 1024 : defaults.workspaceBytes,
    idle: { idleTimeoutSeconds: config.idle_timeout_seconds, maxLifetimeSeconds: defaults.maxLifetimeSeconds },
    warmPool: { size: config.warm_pool_size ?? defaults.warmPoolSize, ttlSeconds: defaults.warmPoolTtlSeconds },
    snapshots: { keep: config.workspace_snapshots.keep, maxBytes: config.workspace_snapshots.max_mb * 1024 * 1024 },
  };
}

/** The sandbox of an environment that sets nothing, on an operator's defaults. */
export const DEFAULT_SANDBOX_CONFIG: SandboxConfig = sandboxConfigOf(environmentConfigFrom(null));
