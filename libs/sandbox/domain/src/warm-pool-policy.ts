import { SandboxLabels, sandboxOwner } from './naming';

/** A container as the runtime lists it (a subset of `SandboxInfo` in `@berth/ports`). */
export type LiveSandbox = Readonly<{
  id: string;
  name: string;
  labels: Readonly<Record<string, string>>;
  running: boolean;
  startedAt: string | null;
}>;

/** What the store says a session is bound to: `sandboxId` is the container name. */
export type SandboxBinding = Readonly<{ sessionId: string; generation: number; sandboxId: string }>;

/** A session that asked for a sandbox of `generation` and has none bound for it yet. */
export type SandboxRequest = Readonly<{ sessionId: string; generation: number }>;

/** `fingerprint`: the current config's (see `sandboxConfigFingerprint`); other pool containers are stale. */
export type PoolTarget = Readonly<{ environmentId: string; size: number; ttlSeconds: number; fingerprint?: string }>;

export type ReapReason =
  | 'unrecognised'
  | 'unbound'
  | 'stale_generation'
  | 'pool_disabled'
  | 'not_running'
  | 'ttl_expired'
  | 'config_changed'
  | 'surplus';

export type StartupPlan = Readonly<{
  /** Live containers the store binds to a session: keep serving them. */
  adopt: readonly Readonly<{ sandbox: LiveSandbox; sessionId: string; generation: number }>[];
  /** Bound but not running: report the death to the kernel (it clears the binding), then remove. */
  dead: readonly Readonly<{ sandbox: LiveSandbox; sessionId: string; generation: number }>[];
  /** Unclaimed pool containers still fit to hand out. */
  warm: readonly Readonly<{ sandbox: LiveSandbox; environmentId: string }>[];
  reap: readonly Readonly<{ sandbox: LiveSandbox; reason: ReapReason }>[];
  /**
   * Unbound containers of a generation their session still asks for: another manager (or the one
   * that died) is about to bind it, and the session's next acquisition reuses it by name. Left alone.
   */
  pending: readonly Readonly<{ sandbox: LiveSandbox; sessionId: string; generation: number }>[];
}>;

/** True once a warm container has idled past its TTL (unknown start time counts as expired). */
export function isWarmExpired(startedAt: string | null, ttlSeconds: number, now: Date): boolean {
  if (startedAt === null) return true;
  const started = Date.parse(startedAt);
  return Number.isNaN(started) || now.getTime() - started >= ttlSeconds * 1000;
}

/** How many warm containers to start now so that ready + starting reaches the target. */
export function refillCount(target: number, ready: number, starting: number): number {
  return Math.max(0, target - ready - starting);
}

/**
 * How long a spare workspace no container mounts is left alone: another manager may have made it
 * for a warm container it has not created yet (the container waits for its placement, and on a
 * busy engine for the create itself). Generous, since a spare kept too long costs only its disk
 * until the next start-up reconcile.
 */
export const SPARE_WORKSPACE_GRACE_MS = 5 * 60_000;

/**
 * The spare workspaces a start-up reconcile removes: those no container mounts, made at least
 * `SPARE_WORKSPACE_GRACE_MS` ago. A spare whose making time cannot be read is kept.
 */
export function orphanSpares(input: { spares: readonly Readonly<{ id: string; madeAt: string }>[]; mounted: ReadonlySet<string>; now: Date }): string[] {
  const cutoff = input.now.getTime() - SPARE_WORKSPACE_GRACE_MS;
  return input.spares.filter((s) => !input.mounted.has(s.id) && Date.parse(s.madeAt) <= cutoff).map((s) => s.id);
}

/**
 * What a (re)starting manager does with the managed containers it finds: adopt what the store
 * still binds, leave alone a running container of a generation its session still asks for (being
 * bound, maybe by another manager), keep fresh pool containers up to each pool's size, and reap
 * the rest (orphans of a crash between create and bind whose request is gone, stale generations,
 * expired, outdated or surplus warm containers).
 * Newest warm containers are kept first: they have the longest TTL left.
 */
export function planStartup(input: {
  live: readonly LiveSandbox[];
  bindings: readonly SandboxBinding[];
  requests?: readonly SandboxRequest[];
  pools: readonly PoolTarget[];
  now: Date;
}): StartupPlan {
  const requested = new Set((input.requests ?? []).map((r) => `${r.sessionId}:${r.generation}`));
  const bindingBySession = new Map(input.bindings.map((b) => [b.sessionId, b]));
  const poolByEnv = new Map(input.pools.map((p) => [p.environmentId, p]));
  const adopt: StartupPlan['adopt'][number][] = [];
  const dead: StartupPlan['dead'][number][] = [];
  const reap: StartupPlan['reap'][number][] = [];
  const pending: StartupPlan['pending'][number][] = [];
  const candidates = new Map<string, LiveSandbox[]>();

  for (const sandbox of input.live) {
    const owner = sandboxOwner(sandbox.name, sandbox.labels);
    if (owner === null) {
      reap.push({ sandbox, reason: 'unrecognised' });
    } else if (owner.kind === 'session') {
      const binding = bindingBySession.get(owner.sessionId);
      const bare = sandbox.name.replace(/^\//, '');
      if (requested.has(`${owner.sessionId}:${owner.generation}`) && sandbox.running && binding?.generation !== owner.generation) {
        pending.push({ sandbox, sessionId: owner.sessionId, generation: owner.generation });
      } else if (!binding) reap.push({ sandbox, reason: 'unbound' });
      else if (binding.generation !== owner.generation || binding.sandboxId !== bare) reap.push({ sandbox, reason: 'stale_generation' });
      else if (sandbox.running) adopt.push({ sandbox, sessionId: owner.sessionId, generation: owner.generation });
      else dead.push({ sandbox, sessionId: owner.sessionId, generation: owner.generation });
    } else {
      const pool = poolByEnv.get(owner.environmentId);
      if (!pool || pool.size === 0) reap.push({ sandbox, reason: 'pool_disabled' });
      else if (!sandbox.running) reap.push({ sandbox, reason: 'not_running' });
      else if (isWarmExpired(sandbox.startedAt, pool.ttlSeconds, input.now)) reap.push({ sandbox, reason: 'ttl_expired' });
      else if (pool.fingerprint !== undefined && sandbox.labels[SandboxLabels.poolSpec] !== pool.fingerprint) reap.push({ sandbox, reason: 'config_changed' });
      else candidates.set(owner.environmentId, [...(candidates.get(owner.environmentId) ?? []), sandbox]);
    }
  }

  const warm: StartupPlan['warm'][number][] = [];
  for (const [environmentId, sandboxes] of candidates) {
    const size = poolByEnv.get(environmentId)?.size ?? 0;
    const newestFirst = [...sandboxes].sort((a, b) => Date.parse(b.startedAt ?? '') - Date.parse(a.startedAt ?? ''));
    newestFirst.forEach((sandbox, i) => (i < size ? warm.push({ sandbox, environmentId }) : reap.push({ sandbox, reason: 'surplus' })));
  }
  return { adopt, dead, warm, reap, pending };
}
