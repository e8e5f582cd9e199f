import { ValidationError } from '@berth/core';
import { DEFAULT_SANDBOX_NETWORK, SANDBOX_NETWORKS, sandboxNetworkOf, type SandboxNetwork } from '@berth/contracts';

export type { SandboxNetwork } from '@berth/contracts';

export type IdlePolicy = Readonly<{
  /** The lease runs out this long after the last activity. */
  idleTimeoutSeconds: number;
  /** Hard cap on a sandbox's life whatever its activity; null = none. */
  maxLifetimeSeconds: number | null;
}>;

export type WarmPoolConfig = Readonly<{ size: number; ttlSeconds: number }>;

/** What an environment says about its sandboxes, validated and with defaults applied. */
export type SandboxConfig = Readonly<{
  image: string;
  network: SandboxNetwork;
  memoryBytes: number;
  nanoCpus: number;
  pidsLimit: number;
  readOnlyRoot: boolean;
  idle: IdlePolicy;
  warmPool: WarmPoolConfig;
}>;

/** Server-wide defaults (configuration), overridden field by field by the environment. */
export type SandboxDefaults = SandboxConfig;

export const DEFAULT_SANDBOX_CONFIG: SandboxDefaults = {
  image: 'berth/harness:latest',
  network: DEFAULT_SANDBOX_NETWORK,
  memoryBytes: 2 * 1024 ** 3,
  nanoCpus: 2_000_000_000,
  pidsLimit: 512,
  readOnlyRoot: false,
  idle: { idleTimeoutSeconds: 30 * 60, maxLifetimeSeconds: null },
  warmPool: { size: 0, ttlSeconds: 30 * 60 },
};

/** Bounds that keep a typo from asking for a 1 TB sandbox or a zero-pid one. */
const LIMITS = {
  memoryMb: [64, 256 * 1024],
  cpus: [0.1, 64],
  pids: [16, 65_536],
  idleSeconds: [10, 7 * 24 * 3600],
  lifetimeSeconds: [60, 30 * 24 * 3600],
  poolSize: [0, 64],
  ttlSeconds: [10, 24 * 3600],
} as const;

// Image references: registry/name[:tag][@digest], no spaces or shell metacharacters.
const IMAGE_REF = /^[a-z0-9][a-z0-9._\-/:]{0,254}(@sha256:[a-f0-9]{64})?$/;

type Raw = Readonly<Record<string, unknown>>;

const isRecord = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);

function record(v: unknown, field: string): Raw | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isRecord(v)) throw new ValidationError(`${field} must be an object`, field);
  return v;
}

function numberIn(v: unknown, field: string, [min, max]: readonly [number, number], integer: boolean): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || (integer && !Number.isInteger(v)) || v < min || v > max) {
    throw new ValidationError(`${field} must be ${integer ? 'an integer' : 'a number'} between ${min} and ${max}`, field);
  }
  return v;
}

function bool(v: unknown, field: string): boolean | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'boolean') throw new ValidationError(`${field} must be a boolean`, field);
  return v;
}

function image(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string' || !IMAGE_REF.test(v)) throw new ValidationError(`${field} must be an image reference like berth/harness:latest`, field);
  return v;
}

function network(v: unknown, field: string): SandboxNetwork | undefined {
  if (v === undefined || v === null) return undefined;
  const mode = sandboxNetworkOf(v);
  if (mode === null) throw new ValidationError(`${field} must be one of ${SANDBOX_NETWORKS.join(', ')}`, field);
  return mode;
}

/** An environment's `config.network` (absent: `egress`); a ValidationError for anything else. */
export function sandboxNetworkFrom(config: unknown, fallback: SandboxNetwork = DEFAULT_SANDBOX_CONFIG.network): SandboxNetwork {
  return network((record(config, 'config') ?? {})['network'], 'config.network') ?? fallback;
}

/**
 * Reads Berth's sandbox settings from an environment's `config` (`image`, `network`,
 * `resources.{memory_mb,cpus,pids}`, `read_only_root`, `idle_policy.{idle_timeout_seconds,
 * max_lifetime_seconds}`, `warm_pool.{size,ttl_seconds}`), applying `defaults` to what is absent.
 * Throws a ValidationError naming the field (`config.resources.cpus`, …) for bad values.
 */
export function sandboxConfigFrom(config: unknown, defaults: SandboxDefaults = DEFAULT_SANDBOX_CONFIG): SandboxConfig {
  const root = record(config, 'config') ?? {};
  const resources = record(root['resources'], 'config.resources') ?? {};
  const idle = record(root['idle_policy'], 'config.idle_policy') ?? {};
  const pool = record(root['warm_pool'], 'config.warm_pool') ?? {};
  const memoryMb = numberIn(resources['memory_mb'], 'config.resources.memory_mb', LIMITS.memoryMb, true);
  const cpus = numberIn(resources['cpus'], 'config.resources.cpus', LIMITS.cpus, false);
  const maxLifetime = idle['max_lifetime_seconds'];
  return {
    image: image(root['image'], 'config.image') ?? defaults.image,
    network: sandboxNetworkFrom(root, defaults.network),
    memoryBytes: memoryMb !== undefined ? memoryMb * 1024 * 1024 : defaults.memoryBytes,
    nanoCpus: cpus !== undefined ? Math.round(cpus * 1e9) : defaults.nanoCpus,
    pidsLimit: numberIn(resources['pids'], 'config.resources.pids', LIMITS.pids, true) ?? defaults.pidsLimit,
    readOnlyRoot: bool(root['read_only_root'], 'config.read_only_root') ?? defaults.readOnlyRoot,
    idle: {
      idleTimeoutSeconds:
        numberIn(idle['idle_timeout_seconds'], 'config.idle_policy.idle_timeout_seconds', LIMITS.idleSeconds, true) ??
        defaults.idle.idleTimeoutSeconds,
      maxLifetimeSeconds:
        maxLifetime === null
          ? null
          : (numberIn(maxLifetime, 'config.idle_policy.max_lifetime_seconds', LIMITS.lifetimeSeconds, true) ?? defaults.idle.maxLifetimeSeconds),
    },
    warmPool: {
      size: numberIn(pool['size'], 'config.warm_pool.size', LIMITS.poolSize, true) ?? defaults.warmPool.size,
      ttlSeconds: numberIn(pool['ttl_seconds'], 'config.warm_pool.ttl_seconds', LIMITS.ttlSeconds, true) ?? defaults.warmPool.ttlSeconds,
    },
  };
}
