import type { EventType } from '@berth/contracts';
import { harnessAdapterFor, type HarnessAdapter, type PendingConfirmation } from '@berth/harness';
import type { Logger, SandboxRuntime, SessionJournal } from '@berth/ports';
import { relayUrl } from '@berth/sandbox-domain';
import type { AnswerConfirmation, InterruptHarness, TurnToRun } from '@berth/sandbox-workflow';
import type { SandboxMetrics, TraceContext } from '@berth/telemetry';
import type { CrashPoints } from '../config/crash-points';
import type { EnvironmentSettingsReader, ModelSettings } from '../sandboxes/environment-settings';
import type { SessionFiles } from '../session-files/session-files';
import type { PinnedAgents } from '../sessions/pinned-agents';
import type { VaultVariables } from '../sessions/vault-variables';
import type { TranscriptSync } from './transcript-sync';
import type { TurnCheckpoints } from './turn-checkpoints';
import { DEFAULT_TURN_TUNING, TurnExecution, type TurnReport, type TurnTuning } from './turn-execution';
import { turnFiles, wholeLines } from './turn-files';
import { TurnProcess, writeStdinOnce } from './turn-process';
import type { SendManagerCommand } from '../workflow/manager-sender';
import type { CustomToolSockets } from '../custom-tools/custom-tool-sockets';

export type TurnExecutionsDeps = Readonly<{
  runtime: SandboxRuntime;
  journal: SessionJournal;
  settings: EnvironmentSettingsReader;
  /** The agent version each session pinned, read for every turn. */
  agents: PinnedAgents;
  /** The placeholders of the session's `environment_variable` credentials, read for every turn. */
  vaultVariables: VaultVariables;
  transcripts: TranscriptSync;
  /** What each completed turn leaves for a fork. */
  checkpoints: Pick<TurnCheckpoints, 'take'>;
  files: Pick<SessionFiles, 'mount' | 'captureOutputs' | 'workspaceBytes'>;
  /** Workspaces have no size limit of their own (Docker volumes): the environment's is checked before each turn. */
  softWorkspaceLimit?: boolean;
  send: SendManagerCommand;
  crash: CrashPoints;
  log: Logger;
  metrics: Pick<SandboxMetrics, 'turnSeconds'>;
  now: () => string;
  adapterFor?: (kind: TurnToRun['harness']) => HarnessAdapter;
  tuning?: Partial<TurnTuning>;
  /** Serves the tools socket of a sandbox whose turn's agent has custom tools; null: no platform directories (custom tool calls fail). */
  customTools: Pick<CustomToolSockets, 'serve'> | null;
}>;

const OUTPUT_TYPES: readonly EventType[] = [
  'AgentMessageRecorded',
  'AgentThinkingRecorded',
  'AgentToolUseRecorded',
  'AgentToolResultRecorded',
  'AgentMcpToolUseRecorded',
  'AgentMcpToolResultRecorded',
  'AgentCustomToolUseRecorded',
  'UsageRecorded',
];

/**
 * The turns this process runs, one per session: starts them (a repeated start of the same turn
 * joins it; the next turn of a session waits for the previous one's harness to exit), and carries
 * out what the workflow asks of them (interrupt, abandon, answer a confirmation).
 */
export class TurnExecutions {
  private readonly bySession = new Map<string, TurnExecution>();
  private readonly restored = new Set<string>();
  private readonly tuning: TurnTuning;

  constructor(private readonly deps: TurnExecutionsDeps) {
    this.tuning = { ...DEFAULT_TURN_TUNING, ...deps.tuning };
  }

  get(sessionId: string): TurnExecution | undefined {
    return this.bySession.get(sessionId);
  }

  all(): readonly TurnExecution[] {
    return [...this.bySession.values()];
  }

  /** How many turns here have not settled for their users yet (the `berth_turns_running` gauge). */
  unsettled(): number {
    return this.all().filter((e) => !e.settled).length;
  }

  /** Starts the turn (its span a child of `trace`); a start of the turn already running here joins it. */
  start(turn: TurnToRun, report: TurnReport, trace?: TraceContext): TurnExecution {
    const current = this.bySession.get(turn.session_id);
    // The same turn on another sandbox (continued after a pause) is a new harness: it starts once the released one's execution ended.
    if (current?.turnId === turn.turn_id && current.generation === turn.generation) return current;
    const execution = new TurnExecution(
      turn,
      {
        runtime: this.deps.runtime,
        sendOutputs: this.deps.send,
        transcripts: this.deps.transcripts,
        files: this.deps.files,
        adapter: this.adapterFor(turn.harness),
        model: () => this.modelOf(turn),
        workspaceLimit: () => this.workspaceLimitOf(turn),
        agent: () => this.deps.agents.read(turn.owner_id, turn.agent),
        vaultVariables: () => this.deps.vaultVariables.read(turn.owner_id, turn.vault_ids),
        customTools: this.deps.customTools,
        crash: this.deps.crash,
        log: this.deps.log,
        metrics: this.deps.metrics,
        tuning: this.tuning,
        now: this.deps.now,
        restored: this.restored,
        checkpoint: (transcriptMirrored) => this.deps.checkpoints.take(turn, transcriptMirrored),
        lastRecordedOffset: (beforeSeq) => this.lastRecordedOffset(turn.session_id, turn.turn_id, beforeSeq),
        report,
      },
      current?.exited ?? Promise.resolve(),
      trace,
    );
    this.bySession.set(turn.session_id, execution);
    void execution.done.finally(() => {
      if (this.bySession.get(turn.session_id) === execution) this.bySession.delete(turn.session_id);
    });
    return execution;
  }

  /** The environment's model settings; a `host` sandbox's relay has a port of its own on the host, picked when its container was made. */
  private async modelOf(turn: TurnToRun): Promise<ModelSettings> {
    const settings = await this.deps.settings.read(turn.owner_id, turn.environment_id);
    if (settings.sandbox.network !== 'host') return settings.model;
    const port = (await this.deps.runtime.inspect(turn.sandbox_id))?.egressRelayPort;
    if (port === undefined || port === null) throw new Error(`sandbox ${turn.sandbox_id} has no egress relay port`);
    return { ...settings.model, baseUrl: relayUrl(port) };
  }

  /** The environment's current `workspace_mb` (so raising it frees a session at its limit), when workspaces need it checked. */
  private async workspaceLimitOf(turn: TurnToRun): Promise<Readonly<{ bytes: number; environmentId: string }> | null> {
    if (this.deps.softWorkspaceLimit !== true) return null;
    const settings = await this.deps.settings.read(turn.owner_id, turn.environment_id);
    return { bytes: settings.sandbox.workspaceBytes, environmentId: turn.environment_id };
  }

  /** Stops the turn's harness: through its execution when this process streams it, else its process group in the sandbox. */
  async interrupt(o: InterruptHarness): Promise<void> {
    const execution = this.bySession.get(o.session_id);
    if (o.streamed_here && execution?.turnId === o.turn_id) return execution.interrupt();
    await TurnProcess.kill({ runtime: this.deps.runtime, sandboxId: o.sandbox_id, turnId: o.turn_id }, 'INT').catch((e: unknown) =>
      this.deps.log.warn('could not signal a harness', { session_id: o.session_id, turn_id: o.turn_id, sandbox_id: o.sandbox_id, err: e }),
    );
  }

  abandon(sessionId: string, turnId: string): void {
    const execution = this.bySession.get(sessionId);
    if (execution?.turnId === turnId) execution.abandon();
  }

  /**
   * Answers the harness's permission request in its stdin file (once, whoever started the harness):
   * the request is the one this process parsed, or, after a restart, the one in the turn's output file.
   */
  async answer(o: AnswerConfirmation): Promise<void> {
    const execution = this.bySession.get(o.session_id);
    const adapter = this.adapterFor(o.harness);
    const pending = (execution?.turnId === o.turn_id ? execution.pendingConfirmation(o.harness_tool_use_id) : undefined) ?? (await this.pendingInOutputFile(o, adapter));
    if (pending === undefined) {
      this.deps.log.warn('tool use had no pending confirmation to answer', { session_id: o.session_id, turn_id: o.turn_id, tool_use_id: o.harness_tool_use_id });
      return;
    }
    const line = adapter.answerConfirmation(pending, { result: o.result, denyMessage: o.deny_message });
    if (line === null) return;
    await writeStdinOnce({ runtime: this.deps.runtime, sandboxId: o.sandbox_id, turnId: o.turn_id }, line);
    if (execution?.turnId === o.turn_id) execution.answered(o.harness_tool_use_id);
  }

  private async pendingInOutputFile(o: AnswerConfirmation, adapter: HarnessAdapter): Promise<PendingConfirmation | undefined> {
    const { lines } = wholeLines(await this.deps.runtime.readFile(o.sandbox_id, turnFiles(o.turn_id).output));
    let state = adapter.initialState(o.permission_mode);
    let found: PendingConfirmation | undefined;
    for (const line of lines) {
      const step = adapter.parseLine(line, state);
      state = step.state;
      if (step.confirmation?.toolUseId === o.harness_tool_use_id) found = step.confirmation;
    }
    return found;
  }

  /** The highest output offset the kernel recorded for the turn (-1: none), or recorded before `beforeSeq`: where a reattached turn resumes reporting. */
  private async lastRecordedOffset(sessionId: string, turnId: string, beforeSeq?: number): Promise<number> {
    const [latest] = await this.deps.journal.readEvents(sessionId, { order: 'desc', limit: 1, types: OUTPUT_TYPES, ...(beforeSeq === undefined ? {} : { beforeSeq }) });
    return latest !== undefined && 'offset' in latest.data && latest.data.turn_id === turnId ? latest.data.offset : -1;
  }

  private adapterFor(kind: TurnToRun['harness']): HarnessAdapter {
    return (this.deps.adapterFor ?? harnessAdapterFor)(kind);
  }
}
