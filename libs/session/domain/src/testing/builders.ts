import { EVENT_SCHEMA_VERSIONS, eventIdFor, type CommandData, type CommandType, type RecordedEvent, type SessionCommand, type SessionCommandOf } from '@berth/contracts';
import { commandFor, createSessionData } from '@berth/contracts/testing';
import { decide } from '../decide';
import { evolve } from '../evolve';
import { initialState, type SessionState } from '../state';

/** Test builders: commands with their defaults filled, and histories made by running the decider. */
export const SESSION_ID = 'sesn_1';
export const OWNER = 'owner_1';
export const AGENT = 'agent_1';

let counter = 0;
export const nextCommandId = (): string => `cmd_${++counter}`;

export function command<T extends CommandType>(type: T, data: CommandData<T>, commandId = nextCommandId()): SessionCommandOf<T> {
  return commandFor(type, SESSION_ID, data, { command_id: commandId, actor: OWNER, issued_at: '2026-01-01T00:00:00.000Z' });
}

/** Expected events for `thenMatches`, where nested `data` is matched partially too. */
export const partial = (events: readonly Record<string, unknown>[]): never => events as never;

const text = (t: string) => [{ type: 'text' as const, text: t }];

export const Cmd = {
  create: (over: Partial<CommandData<'CreateSession'>> = {}) =>
    command('CreateSession', createSessionData({ owner_id: OWNER, agent: { id: AGENT, version: 1 }, idempotency_key: 'key-1', ...over })),
  update: (data: CommandData<'UpdateSession'>) => command('UpdateSession', data),
  bind: (generation = 1, sandbox_id = `sbx_${generation}`, expires_at: string | null = null, lease?: CommandData<'BindSandbox'>['lease']) =>
    command('BindSandbox', { sandbox_id, generation, expires_at, warm: false, ...(lease && { lease }) }),
  startFailed: (generation: number, message = 'image missing') => command('ReportSandboxStartFailed', { generation, message }),
  died: (generation = 1, sandbox_id = `sbx_${generation}`, cause: CommandData<'ReportSandboxDied'>['cause'] = 'die') =>
    command('ReportSandboxDied', { sandbox_id, generation, cause, exit_code: 137 }),
  expired: (generation = 1, sandbox_id = `sbx_${generation}`) => command('ReportSandboxExpired', { sandbox_id, generation }),
  message: (turn_id: string, body = 'hello') => command('SubmitUserMessage', { turn_id, content: text(body) }),
  output: (turn_id: string, offset: number, outputs: CommandData<'RecordAgentOutput'>['outputs'], generation = 1, harness_session_id: string | null = null, commandId?: string) =>
    command('RecordAgentOutput', { turn_id, generation, offset, outputs, harness_session_id }, commandId),
  complete: (turn_id: string, generation = 1, interrupted = false, harness_session_id: string | null = null, checkpoint?: CommandData<'CompleteTurn'>['checkpoint']) =>
    command('CompleteTurn', { turn_id, generation, interrupted, harness_session_id, ...(checkpoint !== undefined ? { checkpoint } : {}) }),
  fork: (fork_session_id: string, at: Readonly<{ event_id?: string; seq?: number }> = {}) =>
    command('ForkSession', { fork_session_id, event_id: at.event_id ?? null, seq: at.seq ?? null }),
  fail: (turn_id: string, reason: CommandData<'FailTurn'>['reason'] = 'harness_failed', message = 'boom') => command('FailTurn', { turn_id, reason, message }),
  recoverTurn: (turn_id: string, method: CommandData<'RecoverTurn'>['method'] = 'transcript_recovered') => command('RecoverTurn', { turn_id, method }),
  transcriptPending: (turn_id: string) => command('MarkTranscriptPending', { turn_id }),
  interrupt: () => command('InterruptTurn', {}),
  confirm: (tool_use_id: string, result: 'allow' | 'deny' = 'allow', deny_message: string | null = null) =>
    command('ConfirmToolUse', { tool_use_id, result, deny_message }),
  customResult: (custom_tool_use_id: string, text_: string | null = 'sunny', is_error = false) =>
    command('SubmitCustomToolResult', { custom_tool_use_id, content: text_ === null ? [] : text(text_), is_error }),
  terminate: () => command('TerminateSession', {}),
  end: () => command('EndConversation', {}),
  pause: () => command('PauseSession', {}),
  resume: () => command('ResumeSession', {}),
  archive: () => command('ArchiveSession', {}),
  delete: () => command('DeleteSession', {}),
  recover: (probe: Partial<CommandData<'RecoverSession'>['probe']> = {}) =>
    command('RecoverSession', { probe: { exists: true, running: true, expiry_known: true, expired: false, ...probe } }),
  permission: (mode: CommandData<'SetPermissionMode'>['mode']) => command('SetPermissionMode', { mode }),
  egressDenied: (generation = 1, host = 'example.com') =>
    command('ReportEgressDenied', { generation, host, port: 443, reason: 'host_not_allowed', setting: 'config.networking.allowed_hosts', message: `Berth egress refused ${host}:443` }),
  error: (message = 'poison command') => command('RaiseSessionError', { error_type: 'unknown_error', message, retry_status: 'terminal' }),
  addResource: (resource: CommandData<'AddSessionResource'>['resource']) => command('AddSessionResource', { resource }),
  removeResource: (resource_id: string) => command('RemoveSessionResource', { resource_id }),
};

/** A turn's checkpoint: its transcript cut (`bytes` of the one file) and a workspace snapshot (null: none). */
export const checkpoint = (bytes: number, workspace: Readonly<{ bytes: number; files: number }> | null = { bytes: 1024, files: 1 }, dropped_turn_ids: string[] = []) => ({
  transcript: [{ path: '/home/agent/.claude/projects/-workspace/hs_1.jsonl', bytes }],
  workspace,
  dropped_turn_ids,
});

const STAMP = '2026-01-01T00:00:00.000Z';

/** Session resources as the gateway resolves them (ids, mount paths and times filled in). */
export const Res = {
  file: (id: string, file_id = `file_${id}`, mount_path = `/mnt/session/uploads/${file_id}`) =>
    ({ type: 'file' as const, id, file_id, mount_path, created_at: STAMP, updated_at: STAMP }),
  repo: (id: string, mount_path = '/workspace/app', checkout: { type: 'branch'; name: string } | { type: 'commit'; sha: string } | null = null) =>
    ({ type: 'github_repository' as const, id, url: 'https://git.example/team/app.git', checkout, mount_path, created_at: STAMP, updated_at: STAMP }),
};

export const Out = {
  message: (t: string) => ({ kind: 'message' as const, content: text(t) }),
  thinking: () => ({ kind: 'thinking' as const }),
  toolUse: (tool_use_id: string, needs_confirmation = false) => ({ kind: 'tool_use' as const, tool_use_id, name: 'bash', input: { command: 'ls' }, needs_confirmation }),
  customToolUse: (tool_use_id: string, name = 'get_weather', input: Record<string, unknown> = { city: 'Oslo' }) =>
    ({ kind: 'custom_tool_use' as const, tool_use_id, name, input }),
  toolResult: (tool_use_id: string) => ({ kind: 'tool_result' as const, tool_use_id, content: [{ type: 'text', text: 'ok' }], is_error: false }),
  usage: (input_tokens: number, output_tokens: number) => ({
    kind: 'usage' as const,
    usage: { input_tokens, output_tokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
  }),
};

/** Runs the commands through decide/evolve and stamps the events as the kernel would. */
export function historyOf(...commands: SessionCommand[]): RecordedEvent[] {
  const history: RecordedEvent[] = [];
  let state: SessionState = initialState();
  for (const cmd of commands) {
    decide(cmd, state).forEach((event, index) => {
      const recorded = {
        ...event,
        id: eventIdFor(cmd.meta.command_id, index),
        session_id: SESSION_ID,
        seq: history.length + 1,
        schema_version: EVENT_SCHEMA_VERSIONS[event.type],
        command_id: cmd.meta.command_id,
        occurred_at: new Date(Date.UTC(2026, 0, 1, 0, 0, history.length)).toISOString(),
      } as RecordedEvent;
      history.push(recorded);
      state = evolve(state, recorded);
    });
  }
  return history;
}

export const stateOf = (...commands: SessionCommand[]): SessionState => historyOf(...commands).reduce(evolve, initialState());

/** A READY session with sandbox generation 1 bound. */
export const readySession = (): SessionCommand[] => [Cmd.create(), Cmd.bind(1)];
/** A READY session running turn `turn_1`. */
export const runningTurn = (): SessionCommand[] => [...readySession(), Cmd.message('turn_1')];
