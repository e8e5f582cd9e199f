import type { CommandType, SessionCommand } from '@berth/contracts';
import { randomIds } from '@berth/core';

/** A well-formed command envelope for tests. */
export function commandFor<T extends CommandType>(
  type: T,
  sessionId: string,
  data: unknown,
  commandId = randomIds.next('cmd'),
): SessionCommand {
  return {
    type,
    data,
    meta: { command_id: commandId, session_id: sessionId, actor: 'test', issued_at: new Date().toISOString() },
  } as SessionCommand;
}

export const createSession = (sessionId: string, commandId?: string): SessionCommand =>
  commandFor(
    'CreateSession',
    sessionId,
    {
      owner_id: 'owner_1',
      agent: { id: 'agent_1', version: 1 },
      environment_id: 'env_1',
      harness: 'claude-code',
      title: null,
      metadata: {},
      idempotency_key: null,
      permission_mode: 'always_allow',
    },
    commandId,
  );

export const submitMessage = (sessionId: string, text: string, commandId?: string): SessionCommand =>
  commandFor('SubmitUserMessage', sessionId, { turn_id: randomIds.next('turn'), content: [{ type: 'text', text }] }, commandId);
