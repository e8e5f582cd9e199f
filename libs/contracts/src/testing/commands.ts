import { randomIds } from '@berth/core';
import type { CommandData, CommandMeta, CommandType, SessionCommandOf } from '../commands';

/**
 * A well-formed command envelope for tests and fakes. Meta defaults: a fresh `cmd_` id, actor
 * `test`, issued now; pass any of them to pin it (e.g. a fixed `issued_at` for a pure test).
 */
export function commandFor<T extends CommandType>(
  type: T,
  sessionId: string,
  data: CommandData<T>,
  meta: Partial<Omit<CommandMeta, 'session_id'>> = {},
): SessionCommandOf<T> {
  return {
    type,
    data,
    meta: {
      ...meta,
      command_id: meta.command_id ?? randomIds.next('cmd'),
      session_id: sessionId,
      actor: meta.actor ?? 'test',
      issued_at: meta.issued_at ?? new Date().toISOString(),
    },
  } as unknown as SessionCommandOf<T>;
}

/** `CreateSession` data for owner_1's claude-code session with agent_1 v1 in env_1 (override any field). */
export function createSessionData(over: Partial<CommandData<'CreateSession'>> = {}): CommandData<'CreateSession'> {
  return {
    owner_id: 'owner_1',
    agent: { id: 'agent_1', version: 1 },
    environment_id: 'env_1',
    harness: 'claude-code',
    title: null,
    metadata: {},
    idempotency_key: null,
    permission_mode: 'always_allow',
    ...over,
  };
}
