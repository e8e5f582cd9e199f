import type { AgentOutput, CommandData } from '@berth/contracts';
import { digest64, SAFE_TOKEN } from '@berth/core';

/** A command the sandbox-manager reports to the kernel; the caller adds who sent it and when. */
export type ManagerCommand = {
  [T in ManagerCommandType]: Readonly<{ type: T; session_id: string; command_id: string; data: CommandData<T> }>;
}[ManagerCommandType];

export type ManagerCommandType =
  | 'BindSandbox'
  | 'ReportSandboxStartFailed'
  | 'ReportSandboxDied'
  | 'ReportSandboxExpired'
  | 'RecordAgentOutput'
  | 'CompleteTurn'
  | 'FailTurn';

/**
 * `cmd_sm_<key>`, derived only from what the fact is about, so a report retried after a crash or a
 * redelivery is the same command and the kernel applies it once. A key too long for a token
 * (ids may be 128 characters each) is hashed rather than cut, so two facts never share an id.
 */
function managerCommandId(key: string): string {
  const readable = `cmd_sm_${key}`;
  return SAFE_TOKEN.test(readable) ? readable : `cmd_sm_h${digest64(key)}`;
}

/**
 * Every command the sandbox-manager sends, one factory each: the only place their ids are derived.
 * The death watcher and a turn that sees its container die build the same `ReportSandboxDied`;
 * an interrupt's completion and the harness's own are the same `CompleteTurn`.
 */
export const managerCommands = {
  bindSandbox: (sessionId: string, data: CommandData<'BindSandbox'>): ManagerCommand => ({
    type: 'BindSandbox',
    session_id: sessionId,
    command_id: managerCommandId(`bind_${sessionId}_g${data.generation}`),
    data,
  }),
  sandboxStartFailed: (sessionId: string, generation: number, message: string): ManagerCommand => ({
    type: 'ReportSandboxStartFailed',
    session_id: sessionId,
    command_id: managerCommandId(`startfail_${sessionId}_g${generation}`),
    data: { generation, message: message.slice(0, 4096) },
  }),
  sandboxDied: (sessionId: string, data: CommandData<'ReportSandboxDied'>): ManagerCommand => ({
    type: 'ReportSandboxDied',
    session_id: sessionId,
    command_id: managerCommandId(`died_${sessionId}_g${data.generation}`),
    data,
  }),
  sandboxExpired: (sessionId: string, data: CommandData<'ReportSandboxExpired'>): ManagerCommand => ({
    type: 'ReportSandboxExpired',
    session_id: sessionId,
    command_id: managerCommandId(`expired_${sessionId}_g${data.generation}`),
    data,
  }),
  /** One batch of a turn's outputs; the id names its first offset and its length. */
  agentOutput: (
    sessionId: string,
    data: Readonly<{ turn_id: string; generation: number; offset: number; outputs: readonly AgentOutput[]; harness_session_id: string | null }>,
  ): ManagerCommand => ({
    type: 'RecordAgentOutput',
    session_id: sessionId,
    command_id: managerCommandId(`out_${sessionId}_${data.turn_id}_g${data.generation}_${data.offset}_${data.outputs.length}`),
    data: { ...data, outputs: [...data.outputs] },
  }),
  completeTurn: (sessionId: string, data: CommandData<'CompleteTurn'>): ManagerCommand => ({
    type: 'CompleteTurn',
    session_id: sessionId,
    command_id: managerCommandId(`done_${sessionId}_${data.turn_id}`),
    data,
  }),
  failTurn: (sessionId: string, data: CommandData<'FailTurn'>): ManagerCommand => ({
    type: 'FailTurn',
    session_id: sessionId,
    command_id: managerCommandId(`fail_${sessionId}_${data.turn_id}`),
    data: { ...data, message: data.message.slice(0, 4096) },
  }),
} as const;
