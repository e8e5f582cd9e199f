import type { Decider } from '@berth/core';
import type { SessionCommand, SessionEvent } from '@berth/contracts';
import { decideConfirmToolUse, decideInterruptTurn, decideSubmitCustomToolResult, decideSubmitUserMessage } from './deciders/conversation';
import {
  decideArchiveSession,
  decideCreateSession,
  decideDeleteSession,
  decideEndConversation,
  decidePauseSession,
  decideRaiseSessionError,
  decideResumeSession,
  decideSetPermissionMode,
  decideTerminateSession,
  decideUpdateSession,
} from './deciders/lifecycle';
import { decideForkSession } from './deciders/fork';
import { decideRecoverSession } from './deciders/recovery';
import { decideAddSessionResource, decideRemoveSessionResource } from './deciders/resources';
import { decideBindSandbox, decideReportEgressDenied, decideReportSandboxDied, decideReportSandboxExpired, decideReportSandboxStartFailed } from './deciders/sandbox';
import { decideCompleteTurn, decideFailTurn, decideMarkTranscriptPending, decideRecordAgentOutput, decideRecoverTurn } from './deciders/turns';
import { evolve } from './evolve';
import { initialState, type SessionState } from './state';

/**
 * The session's rules: the events a command produces from the current state, or a coded refusal
 * (a BerthError). An empty list is an idempotent no-op. Public event ids the decider hands out
 * (tool-use ids) are `eventIdFor(command_id, index)`, the same ids the kernel stamps.
 */
export function decide(command: SessionCommand, state: SessionState): readonly SessionEvent[] {
  switch (command.type) {
    case 'CreateSession':
      return decideCreateSession(command, state);
    case 'ForkSession':
      return decideForkSession(command, state);
    case 'UpdateSession':
      return decideUpdateSession(command, state);
    case 'SubmitUserMessage':
      return decideSubmitUserMessage(command, state);
    case 'InterruptTurn':
      return decideInterruptTurn(command, state);
    case 'ConfirmToolUse':
      return decideConfirmToolUse(command, state);
    case 'SubmitCustomToolResult':
      return decideSubmitCustomToolResult(command, state);
    case 'RecordAgentOutput':
      return decideRecordAgentOutput(command, state);
    case 'CompleteTurn':
      return decideCompleteTurn(command, state);
    case 'FailTurn':
      return decideFailTurn(command, state);
    case 'RecoverTurn':
      return decideRecoverTurn(command, state);
    case 'MarkTranscriptPending':
      return decideMarkTranscriptPending(command, state);
    case 'BindSandbox':
      return decideBindSandbox(command, state);
    case 'ReportSandboxStartFailed':
      return decideReportSandboxStartFailed(command, state);
    case 'ReportSandboxDied':
      return decideReportSandboxDied(command, state);
    case 'ReportSandboxExpired':
      return decideReportSandboxExpired(command, state);
    case 'ReportEgressDenied':
      return decideReportEgressDenied(command, state);
    case 'TerminateSession':
      return decideTerminateSession(command, state);
    case 'EndConversation':
      return decideEndConversation(command, state);
    case 'PauseSession':
      return decidePauseSession(command, state);
    case 'ResumeSession':
      return decideResumeSession(command, state);
    case 'ArchiveSession':
      return decideArchiveSession(command, state);
    case 'DeleteSession':
      return decideDeleteSession(command, state);
    case 'RecoverSession':
      return decideRecoverSession(command, state);
    case 'SetPermissionMode':
      return decideSetPermissionMode(command, state);
    case 'RaiseSessionError':
      return decideRaiseSessionError(command, state);
    case 'AddSessionResource':
      return decideAddSessionResource(command, state);
    case 'RemoveSessionResource':
      return decideRemoveSessionResource(command, state);
    default:
      return unknownCommand(command);
  }
}

const unknownCommand = (command: never): never => {
  throw new TypeError(`unhandled command ${JSON.stringify(command)}`);
};

export const sessionDecider: Decider<SessionState, SessionCommand, SessionEvent> = { decide, evolve, initialState };
