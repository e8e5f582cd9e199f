import type { CommandData, CommandType, SandboxProbe } from '@berth/contracts';
import { commandFor, createSessionData } from '@berth/contracts/testing';

let counter = 0;

/** Commands for one session with their defaults filled (for tests that drive a kernel directly). */
export function commandsFor(sessionId: string, ownerId = 'owner_1') {
  const command = <T extends CommandType>(type: T, data: CommandData<T>) =>
    commandFor(type, sessionId, data, { command_id: `cmd_t${++counter}`, actor: ownerId, issued_at: '2026-01-01T00:00:00.000Z' });
  return {
    create: (over: Partial<CommandData<'CreateSession'>> = {}) => command('CreateSession', createSessionData({ owner_id: ownerId, ...over })),
    bind: (generation = 1, expires_at: string | null = null) => command('BindSandbox', { sandbox_id: `sbx_${generation}`, generation, expires_at, warm: false }),
    message: (turn_id: string) => command('SubmitUserMessage', { turn_id, content: [{ type: 'text', text: 'hello' }] }),
    harnessSession: (turn_id: string, generation: number, harness_session_id: string) =>
      command('RecordAgentOutput', { turn_id, generation, offset: 0, outputs: [{ kind: 'thinking' }], harness_session_id }),
    complete: (turn_id: string, generation = 1) => command('CompleteTurn', { turn_id, generation, interrupted: false, harness_session_id: null }),
    transcriptPending: (turn_id: string) => command('MarkTranscriptPending', { turn_id }),
    died: (generation = 1) => command('ReportSandboxDied', { sandbox_id: `sbx_${generation}`, generation, cause: 'die', exit_code: 137 }),
    terminate: () => command('TerminateSession', {}),
    delete: () => command('DeleteSession', {}),
    recover: (probe: SandboxProbe) => command('RecoverSession', { probe }),
  };
}
