import { createHash } from 'node:crypto';

const digest = (...parts: readonly string[]): string => createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 40);

/**
 * Command ids of an idempotent write are derived from its key, so a retry re-sends the very same
 * commands and the kernel (which dedupes by command id) applies them once, even when the first
 * attempt failed half-way. One id per command the write sends, numbered by `index`.
 */
export const IdempotentCommandIds = {
  /** `POST /v1/sessions`: the CreateSession command, then one per initial event (`_m<i>`). */
  create: (owner: string, key: string): string => `cmd_idem_${digest(owner, key)}`,
  /** `POST /v1/sessions/{id}/events`: one per event of the batch. */
  sendEvent: (owner: string, sessionId: string, key: string, index: number): string => `cmd_evts_${digest(owner, sessionId, key)}_e${index}`,
  /** The turn a retried user.message opens is the same turn. */
  sendTurn: (owner: string, sessionId: string, key: string, index: number): string => `turn_evts_${digest(owner, sessionId, key)}_e${index}`,
  /** `POST /v1/sessions/import`: its CreateSession command. */
  import: (owner: string, key: string): string => `cmd_imp_${digest(owner, key)}`,
} as const;

/**
 * What an import with a key makes besides its session (the session's id is the claim's), named
 * from the key: a retry after a half-done attempt finds the agent, environment and output files
 * that attempt made instead of making them again.
 */
export const IdempotentImportIds = {
  agent: (owner: string, key: string): string => `agent_imp_${digest(owner, key)}`,
  environment: (owner: string, key: string): string => `env_imp_${digest(owner, key)}`,
  /** The archive's outputs, numbered in manifest order. */
  file: (owner: string, key: string, index: number): string => `file_imp_${digest(owner, key)}_${index}`,
} as const;

/**
 * Where an events key is claimed in the owner's idempotency keys: beside create keys, in a
 * namespace no printable-ASCII create key can reach, and per session.
 */
export const eventsKeySlot = (sessionId: string, key: string): string => `events\u0000${sessionId}\u0000${key}`;

/** Where an import key is claimed: beside create and events keys, in its own namespace. */
export const importKeySlot = (key: string): string => `import\u0000${key}`;

const fingerprint = (value: unknown): string => `sha256:${createHash('sha256').update(JSON.stringify(value)).digest('hex')}`;

/** What an events key is bound to: the exact batch sent (a reuse with another batch is a conflict). */
export const batchFingerprint = (events: unknown): string => fingerprint(events);

/**
 * What an import key is bound to: the archive (the sha256 of its bytes as uploaded) and the
 * caller's agent and environment it was asked to run on, if any.
 */
export const importFingerprint = (archiveSha256: string, targets: Readonly<{ agent_id?: string; environment_id?: string }>): string =>
  fingerprint([archiveSha256, targets.agent_id ?? null, targets.environment_id ?? null]);
