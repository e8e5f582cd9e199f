import { isSafeToken, ValidationError } from '@berth/core';

/**
 * Container names and labels. A session's container name is a pure function of (session id,
 * generation), so every create is idempotent and a restarted manager finds its containers again.
 * Warm-pool containers carry their environment and a slot token instead; claiming one renames it
 * to the session's name. Docker labels are immutable after create, so after a claim the *name*
 * is the source of truth for ownership, and labels only say which pool it came from.
 */
export const SandboxLabels = {
  managed: 'berth.managed',
  session: 'berth.session',
  generation: 'berth.generation',
  environment: 'berth.environment',
  pool: 'berth.pool',
  /** Fingerprint of the environment config a pool container was started with. */
  poolSpec: 'berth.pool-spec',
} as const;

const SESSION_PREFIX = 'berth-s-';
const POOL_PREFIX = 'berth-p-';
const SESSION_NAME = /^berth-s-([A-Za-z0-9_-]{1,128})-g([1-9][0-9]{0,8})$/;
const POOL_NAME = /^berth-p-([A-Za-z0-9_-]{1,128})-([a-z0-9]{1,32})$/;
const SLOT = /^[a-z0-9]{1,32}$/;

export type SandboxOwner =
  | Readonly<{ kind: 'session'; sessionId: string; generation: number; environmentId: string | null }>
  | Readonly<{ kind: 'pool'; environmentId: string; slot: string }>;

function requireToken(value: string, field: string): void {
  if (!isSafeToken(value)) throw new ValidationError(`${field} must be 1-128 characters of letters, digits, '_' or '-'`, field);
}

function requireGeneration(generation: number): void {
  if (!Number.isInteger(generation) || generation < 1 || generation > 999_999_999) {
    throw new ValidationError('generation must be a positive integer', 'generation');
  }
}

export function sessionSandboxName(sessionId: string, generation: number): string {
  requireToken(sessionId, 'session_id');
  requireGeneration(generation);
  return `${SESSION_PREFIX}${sessionId}-g${generation}`;
}

/** `slot` is a short lowercase token the caller draws (ids are passed in: this module is pure). */
export function poolSandboxName(environmentId: string, slot: string): string {
  requireToken(environmentId, 'environment_id');
  if (!SLOT.test(slot)) throw new ValidationError('slot must be 1-32 lowercase letters or digits', 'slot');
  return `${POOL_PREFIX}${environmentId}-${slot}`;
}

export function sessionSandboxLabels(sessionId: string, generation: number, environmentId: string): Record<string, string> {
  requireToken(sessionId, 'session_id');
  requireGeneration(generation);
  requireToken(environmentId, 'environment_id');
  return {
    [SandboxLabels.managed]: 'true',
    [SandboxLabels.session]: sessionId,
    [SandboxLabels.generation]: String(generation),
    [SandboxLabels.environment]: environmentId,
  };
}

export function poolSandboxLabels(environmentId: string): Record<string, string> {
  requireToken(environmentId, 'environment_id');
  return { [SandboxLabels.managed]: 'true', [SandboxLabels.environment]: environmentId, [SandboxLabels.pool]: environmentId };
}

/** The session and generation a session sandbox's name stands for; null for any other name. */
export function sessionOfSandboxName(name: string): Readonly<{ sessionId: string; generation: number }> | null {
  const match = SESSION_NAME.exec(name.startsWith('/') ? name.slice(1) : name);
  return match ? { sessionId: match[1], generation: Number(match[2]) } : null;
}

/**
 * Who a managed container belongs to, read from its name first (a claimed pool container keeps
 * its pool labels but carries the session's name), then from its labels. Null for anything else.
 */
export function sandboxOwner(name: string, labels: Readonly<Record<string, string>>): SandboxOwner | null {
  if (labels[SandboxLabels.managed] !== 'true') return null;
  const bare = name.startsWith('/') ? name.slice(1) : name;
  const environmentId = labels[SandboxLabels.environment] ?? null;
  const session = sessionOfSandboxName(bare);
  if (session) return { kind: 'session', ...session, environmentId };
  const pool = POOL_NAME.exec(bare);
  if (pool && pool[1] === environmentId && labels[SandboxLabels.pool] === environmentId) {
    return { kind: 'pool', environmentId, slot: pool[2] };
  }
  return null;
}
