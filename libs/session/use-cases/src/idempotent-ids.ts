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
} as const;

/**
 * Where an events key is claimed in the owner's idempotency keys: beside create keys, in a
 * namespace no printable-ASCII create key can reach, and per session.
 */
export const eventsKeySlot = (sessionId: string, key: string): string => `events\u0000${sessionId}\u0000${key}`;

/** What an events key is bound to: the exact batch sent (a reuse with another batch is a conflict). */
export const batchFingerprint = (events: unknown): string => `sha256:${createHash('sha256').update(JSON.stringify(events)).digest('hex')}`;
