import type { AgentConfig, TurnCheckpoint } from '@berth/contracts';
import type { HarnessAdapter, ParseState, PendingConfirmation, TurnPlan, TurnTerminal } from '@berth/harness';
import type { Logger, SandboxInfo, SandboxRuntime } from '@berth/ports';
import { SANDBOX_HOME, SANDBOX_WORKDIR, sandboxOwner } from '@berth/sandbox-domain';
import {
  callOf,
  managerCommands,
  sameCall,
  type CarriedDecision,
  type SandboxAfterExit,
  type TurnExited,
  type TurnNotRun,
  type TurnTerminalSeen,
  type TurnToRun,
} from '@berth/sandbox-workflow';
import type { AgentOutput } from '@berth/contracts';
import { inSpan, secondsSince, type SandboxMetrics, type TraceContext } from '@berth/telemetry';
import type { CrashPoints } from '../config/crash-points';
import { MODEL_KEY_PLACEHOLDER, type ModelSettings } from '../sandboxes/environment-settings';
import { ResourceUnavailable } from '../session-files/resource-mounter';
import type { SessionFiles } from '../session-files/session-files';
import type { SendManagerCommand } from '../workflow/manager-sender';
import { withRetries } from '../workflow/send-reliably';
import { OutputBatcher } from './output-batcher';
import { TranscriptMirrorLoop } from './transcript-mirror-loop';
import type { TranscriptSync } from './transcript-sync';
import { TurnFailure } from './turn-failure';
import { TurnProcess } from './turn-process';
import type { CustomToolSockets } from '../custom-tools/custom-tool-sockets';

export type TurnTuning = Readonly<{
  batchMaxOutputs: number;
  /** After an interrupt line, how long the harness gets to stop by itself before its group is killed. */
  interruptGraceMs: number;
  /** Transcript mirror period while the turn runs (also during silent tool steps). */
  mirrorEveryMs: number;
  /** How long an exec that ended without a terminal line waits for Docker to show its container dead. */
  deathSettleMs: number;
}>;

export const DEFAULT_TURN_TUNING: TurnTuning = { batchMaxOutputs: 50, interruptGraceMs: 600, mirrorEveryMs: 1_000, deathSettleMs: 1_000 };

export type TurnReport = (input: TurnTerminalSeen | TurnExited | TurnNotRun) => Promise<void>;

export type TurnExecutionDeps = Readonly<{
  runtime: SandboxRuntime;
  /** Sends one batch of outputs to the kernel (retried with the same id until it answers). */
  sendOutputs: SendManagerCommand;
  transcripts: TranscriptSync;
  /** Resources mounted before the harness starts; outputs captured before the turn reports its end. */
  files: Pick<SessionFiles, 'mount' | 'captureOutputs' | 'workspaceBytes'>;
  /** The soft size limit of the session's workspace, read when the turn starts (null: none to check: the filesystem enforces it). */
  workspaceLimit: () => Promise<Readonly<{ bytes: number; environmentId: string }> | null>;
  adapter: HarnessAdapter;
  /** The environment's model endpoint, read when the harness is about to start. */
  model: () => Promise<ModelSettings>;
  /** The agent version the session pinned at create (null: not in the store), read when the harness is about to start. */
  agent: () => Promise<AgentConfig | null>;
  /** The session's vault variables (placeholders, never secrets), read when the harness is about to start. */
  vaultVariables: () => Promise<Readonly<Record<string, string>>>;
  crash: CrashPoints;
  log: Logger;
  metrics: Pick<SandboxMetrics, 'turnSeconds'>;
  tuning: TurnTuning;
  now: () => string;
  /** Sandboxes whose transcript files this process already restored (or saw a turn write). */
  restored: Set<string>;
  /** The workspace snapshot at the turn's end, and the transcript cut once `transcriptMirrored` resolves (undefined: none could be taken). */
  checkpoint: (transcriptMirrored: Promise<void>) => Promise<TurnCheckpoint | undefined>;
  /** The sandbox's tools socket, served before the harness starts (or is followed again) when the agent has custom tools. */
  customTools: Pick<CustomToolSockets, 'serve'> | null;
  /** Highest offset the kernel recorded for this turn (-1: none), of all its outputs or of those before a journal seq; read when reattaching or continuing. */
  lastRecordedOffset: (beforeSeq?: number) => Promise<number>;
  report: TurnReport;
}>;

/**
 * One turn's harness, from start (or reattach) to exit: reads its lines through the adapter,
 * hands outputs to the batcher, keeps its pending confirmations, mirrors its transcript, and
 * tells the workflow what happened (`turn_terminal`, `turn_exited`, `turn_not_run`). It decides
 * nothing about how the turn settles: the workflow does, on those reports.
 */
export class TurnExecution {
  readonly turnId: string;
  readonly generation: number;
  readonly done: Promise<void>;
  /**
   * The next harness of the session may start: this one's process is gone and its terminal line was
   * reported (its last transcript mirror and exit report may still run: mirrors append at offsets,
   * so the next turn's mirrors and this one's agree), or, without a terminal line, the execution is done.
   */
  readonly exited: Promise<void>;
  /** This process streams the harness (it started it, or follows it after a reattach). */
  attached = false;

  private state: ParseState;
  private harnessSessionId: string | null;
  /** The conversation this turn continues: null when its transcript is not in the sandbox. */
  private resumeId: string | null;
  private process: TurnProcess | null = null;
  private batcher: OutputBatcher | null = null;
  private terminalSeen: Promise<void> | null = null;
  private interruptAsked = false;
  private readonly pending = new Map<string, PendingConfirmation>();
  /** Answers a continued turn still has to give to the calls its new harness re-issues. */
  private readonly carried: CarriedDecision[];
  /** A re-issued call's new tool-use id → the one the journal knows (its results are reported under it). */
  private readonly reissued = new Map<string, string>();
  private readonly abandoned = new AbortController();
  private readonly mirror: TranscriptMirrorLoop;
  /** Every line about this turn names its session, turn and sandbox. */
  private readonly log: Logger;
  private hasSettled = false;
  /** Records the turn's duration, once (see `traced`). */
  private recordSettled: () => void = () => undefined;
  private markExited: () => void = () => undefined;

  constructor(
    private readonly turn: TurnToRun,
    private readonly deps: TurnExecutionDeps,
    previous: Promise<void>,
    private readonly trace?: TraceContext,
  ) {
    this.turnId = turn.turn_id;
    this.generation = turn.generation;
    this.log = deps.log.child({ session_id: turn.session_id, turn_id: turn.turn_id, sandbox_id: turn.sandbox_id });
    this.state = deps.adapter.initialState(turn.permission_mode, turn.prompt);
    this.resumeId = turn.resume_id;
    this.harnessSessionId = turn.resume_id;
    this.carried = [...(turn.continuation?.decisions ?? [])];
    this.mirror = new TranscriptMirrorLoop({
      sync: deps.transcripts,
      sandboxId: turn.sandbox_id,
      sessionId: turn.session_id,
      locations: () => (this.harnessSessionId === null ? null : deps.adapter.transcriptLocations(SANDBOX_HOME, SANDBOX_WORKDIR, this.harnessSessionId)),
      everyMs: deps.tuning.mirrorEveryMs,
      log: this.log,
    });
    this.exited = new Promise((resolve) => (this.markExited = resolve));
    // A turn that settled at its terminal line may still be exiting: the next one starts after it.
    this.done = previous
      .catch(() => undefined)
      .then(() => this.traced())
      .finally(() => this.markExited());
  }

  /** The turn is over for the user (it reported to the workflow), though its process may still exit. */
  get settled(): boolean {
    return this.hasSettled;
  }

  /** A pending confirmation this harness asked for, by its own tool-use id. */
  pendingConfirmation(harnessToolUseId: string): PendingConfirmation | undefined {
    return this.pending.get(harnessToolUseId);
  }

  /** The harness's interrupt line when it reads one, then (or at once) its process group is signalled. */
  interrupt(): void {
    if (this.interruptAsked) return;
    this.interruptAsked = true;
    // Before the harness started, `execute` sees the flag and never starts it.
    if (this.process !== null) this.stopHarness(this.process);
  }

  private stopHarness(process: TurnProcess): void {
    const line = this.deps.adapter.interruptLine();
    const polite = line !== null && process.readsStdin;
    if (polite) void process.write(line).catch((e: unknown) => this.log.warn('interrupt line not written', { err: e }));
    setTimeout(() => {
      if (!this.abandoned.signal.aborted) void this.kill(polite ? 'TERM' : 'INT');
    }, polite ? this.deps.tuning.interruptGraceMs : 0).unref();
  }

  /** Stops following the harness (the turn settled without it). */
  abandon(): void {
    this.abandoned.abort();
  }

  /** Notes that a pending confirmation was answered (the answer line is written by the caller). */
  answered(harnessToolUseId: string): void {
    this.pending.delete(harnessToolUseId);
    if (this.pending.size === 0) this.mirror.resume();
  }

  /**
   * The turn as one span, from harness start (or reattach) to its exit, and one duration, to when it
   * settled for the user: its first report to the workflow (the process may exit after its terminal line).
   */
  private traced(): Promise<void> {
    const start = process.hrtime.bigint();
    this.log.info('turn started', { harness: this.turn.harness, reattach: this.turn.may_have_started });
    this.recordSettled = () => {
      this.recordSettled = () => undefined;
      this.hasSettled = true;
      const seconds = secondsSince(start);
      this.deps.metrics.turnSeconds.observe({ harness: this.turn.harness }, seconds);
      this.log.info('turn settled', { seconds: Math.round(seconds * 1000) / 1000 });
    };
    const attributes = { 'berth.session_id': this.turn.session_id, 'berth.turn_id': this.turnId, 'berth.harness': this.turn.harness };
    return inSpan('turn', { attributes, parent: this.trace }, () => this.execute()).finally(() => this.recordSettled());
  }

  private async execute(): Promise<void> {
    const where = { runtime: this.deps.runtime, sandboxId: this.turn.sandbox_id, turnId: this.turnId };
    try {
      const model = await withRetries("reading the environment's model settings", () => this.deps.model(), this.log);
      await this.serveCustomTools();
      const status = this.turn.may_have_started ? await TurnProcess.find(where) : null;
      this.batcher = await this.batcherFor(status !== null);
      if (status === null) {
        await this.checkWorkspace();
        await this.mountResources();
        const { plan, env } = await this.plan(model);
        // Interrupted (or the session ended) while it was being prepared: the harness never starts.
        if (this.interruptAsked || this.abandoned.signal.aborted) return this.reportExit(null, { state: 'running' });
        this.process = await TurnProcess.start(where, plan, env, SANDBOX_WORKDIR);
      } else {
        this.log.info(`reattaching (harness ${status.alive ? 'still running' : 'ended'})`);
        this.process = await TurnProcess.attach(where, status);
      }
      if (this.interruptAsked) this.stopHarness(this.process);
      this.attached = true;
      this.mirror.start();
      await this.consume(this.process);
    } catch (error) {
      this.mirror.stop();
      if (this.terminalSeen !== null) return this.terminalSeen;
      await this.batcher?.flush();
      if (error instanceof TurnFailure) return this.report({ kind: 'turn_not_run', turn_id: this.turnId, reason: error.reason, message: error.message, now: this.deps.now() });
      const sandbox = await this.sandboxAfterExit(null);
      if (sandbox.state === 'dead') return this.reportExit(null, sandbox);
      return this.report({
        kind: 'turn_not_run',
        turn_id: this.turnId,
        reason: 'harness_failed',
        message: `the harness could not run: ${error instanceof Error ? error.message : String(error)}`,
        now: this.deps.now(),
      });
    }
    this.mirror.stop();
    if (this.terminalSeen !== null) {
      await this.terminalSeen;
      this.markExited();
      // The harness may append to its transcript while it exits: mirror the rest.
      await this.mirror.mirror({ final: true });
      return this.reportExit(await this.exitCode(), { state: 'running' });
    }
    await this.batcher?.flush();
    const exitCode = await this.exitCode();
    const sandbox = await this.sandboxAfterExit(exitCode);
    if (sandbox.state === 'running') await Promise.all([this.mirror.mirror({ final: true }), this.captureOutputs()]);
    this.deps.crash.reached('after-turn-end-before-complete');
    await this.reportExit(exitCode, sandbox);
  }

  /**
   * A reattached turn re-reads its output file from the start: what the kernel has is skipped. A
   * continued turn's harness writes a file of its own, its outputs numbered on after those its
   * released harness recorded: a new one after everything the kernel has, a reattached one after
   * what the kernel had when the turn was resumed (it numbered its outputs from there).
   */
  private async batcherFor(reattached: boolean): Promise<OutputBatcher> {
    const continuation = this.turn.continuation;
    const recorded = reattached || continuation !== null ? await this.deps.lastRecordedOffset() : -1;
    if (continuation === null) return this.newBatcher(recorded, 0);
    const numberedAfter = reattached ? await this.deps.lastRecordedOffset(continuation.resumed_at) : recorded;
    return this.newBatcher(recorded, numberedAfter + 1);
  }

  private newBatcher(lastRecordedOffset: number, firstOffset: number): OutputBatcher {
    const { session_id, turn_id, generation } = this.turn;
    return new OutputBatcher({
      lastRecordedOffset,
      firstOffset,
      maxOutputs: this.deps.tuning.batchMaxOutputs,
      send: async (batch) => {
        await this.deps.sendOutputs(
          managerCommands.agentOutput(session_id, { turn_id, generation, offset: batch.offset, outputs: batch.outputs, harness_session_id: this.harnessSessionId }),
        );
        this.deps.crash.reached('mid-turn');
      },
      onError: (error) => this.log.error('output batch not recorded', { reason: String(error) }),
    });
  }

  private async consume(process: TurnProcess): Promise<void> {
    const iterator = process.lines()[Symbol.asyncIterator]();
    const abandoned = new Promise<'abandoned'>((resolve) => this.abandoned.signal.addEventListener('abort', () => resolve('abandoned'), { once: true }));
    for (;;) {
      const next = await Promise.race([iterator.next(), abandoned]);
      if (next === 'abandoned' || next.done) break;
      this.onLine(next.value);
    }
    await process.endStdin().catch(() => undefined);
  }

  private onLine(line: string): void {
    const step = this.deps.adapter.parseLine(line, this.state);
    this.state = step.state;
    if (step.harnessSessionId) this.harnessSessionId = step.harnessSessionId;
    const confirmation = step.confirmation === undefined ? undefined : this.answerReissued(step.confirmation, step.outputs);
    const outputs = this.reissued.size === 0 ? step.outputs : step.outputs.flatMap((output) => this.asJournaled(output));
    this.batcher?.add(outputs);
    for (const reply of step.stdinLines ?? []) {
      void this.process?.writeOnce(reply).catch((e: unknown) => this.log.warn('answer to the harness not written', { err: e }));
    }
    for (const output of step.outputs) if (output.kind === 'tool_result' && this.pending.has(output.tool_use_id)) this.answered(output.tool_use_id);
    if (confirmation) {
      this.pending.set(confirmation.toolUseId, confirmation);
      // The user must see the tool use now: it waits for them. Until answered, nothing new reaches the transcript.
      void this.batcher?.flush();
      void this.mirror.mirror();
      this.mirror.pause();
    }
    if (step.terminal && this.terminalSeen === null) this.terminalSeen = this.onTerminal(step.terminal);
  }

  /**
   * A continued turn's harness asks about a call the user already answered (the same tool and input
   * as the journaled one): it gets that answer now, and the call is reported as the journaled one.
   * Any other call is a new confirmation (returned, to wait for the user).
   */
  private answerReissued(confirmation: PendingConfirmation, outputs: readonly AgentOutput[]): PendingConfirmation | undefined {
    const call = outputs.map(callOf).find((c) => c?.tool_use_id === confirmation.toolUseId);
    const index = call ? this.carried.findIndex((d) => sameCall(d.call, call)) : -1;
    if (index < 0) return confirmation;
    const [decision] = this.carried.splice(index, 1);
    this.reissued.set(confirmation.toolUseId, decision.harness_tool_use_id);
    const answer = this.deps.adapter.answerConfirmation(confirmation, { result: decision.result, denyMessage: decision.deny_message });
    // Once: a restarted manager re-reads the calls this harness re-issued before, already answered.
    if (answer !== null) void this.process?.writeOnce(answer).catch((e: unknown) => this.log.warn('carried answer not written', { err: e }));
    this.log.info('answered a re-issued call with the answer given before the pause', { result: decision.result });
    return undefined;
  }

  /** Outputs about a re-issued call, as the journal knows it: its tool use is recorded already, its result goes under the old id. */
  private asJournaled(output: AgentOutput): AgentOutput[] {
    if ((output.kind === 'tool_use' || output.kind === 'mcp_tool_use') && this.reissued.has(output.tool_use_id)) return [];
    if ((output.kind === 'tool_result' || output.kind === 'mcp_tool_result') && this.reissued.has(output.tool_use_id)) {
      return [{ ...output, tool_use_id: this.reissued.get(output.tool_use_id) ?? output.tool_use_id }];
    }
    return [output];
  }

  /**
   * The harness printed its terminal line: the turn is over for the user even while the process
   * exits. Its input ends (not waited for: the harness exits once it read it, and the next turn
   * starts after that exit), its outputs, transcript and output files are flushed, side by side with
   * its checkpoint, then the workflow hears of it.
   */
  private async onTerminal(terminal: TurnTerminal): Promise<void> {
    this.pending.clear();
    void this.process?.endStdin().catch(() => undefined);
    const mirrored = this.mirror.mirror({ quick: true });
    // A turn a fork may continue from: its checkpoint is recorded with its completion, so a client that saw it idle can fork it.
    const checkpointed = terminal.ok || terminal.interrupted ? this.deps.checkpoint(mirrored) : Promise.resolve(undefined);
    await Promise.all([this.batcher?.flush(), mirrored, this.captureOutputs()]);
    const checkpoint = await checkpointed;
    this.deps.crash.reached('after-turn-end-before-complete');
    await this.report({
      kind: 'turn_terminal',
      turn_id: this.turnId,
      generation: this.generation,
      ok: terminal.ok,
      interrupted: terminal.interrupted,
      error: terminal.error,
      harness_session_id: this.harnessSessionId,
      ...(checkpoint !== undefined ? { checkpoint } : {}),
      now: this.deps.now(),
    });
  }

  /**
   * A workspace already past its soft limit (a `volume` one: nothing stops a write) refuses the turn
   * before its harness starts. A measurement that fails lets the turn run (logged): the limit is soft.
   */
  private async checkWorkspace(): Promise<void> {
    const limit = await this.deps.workspaceLimit();
    if (limit === null) return;
    let used: number;
    try {
      used = await this.deps.files.workspaceBytes(this.turn.sandbox_id);
    } catch (error) {
      this.log.warn('workspace size not measured; the turn runs', { err: error });
      return;
    }
    if (used <= limit.bytes) return;
    const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
    throw new TurnFailure(
      'workspace_full',
      `the workspace holds ${mib(used)} MiB, over its ${mib(limit.bytes)} MiB limit (resources.workspace_mb of environment ${limit.environmentId}; a soft limit on this installation's volume workspaces, checked before each turn): raise resources.workspace_mb, or continue in a new session`,
    );
  }

  /** Custom tool calls of this turn's harness reach this manager through the sandbox's tools socket (also after a restart: the in-sandbox server asks again). */
  private async serveCustomTools(): Promise<void> {
    const agent = await this.deps.agent();
    if (agent?.tools.some((t) => t.type === 'custom') !== true) return;
    // Refused, never skipped: a harness whose custom tools cannot reach Berth would hang on its first call.
    if (this.deps.customTools === null) {
      throw new TurnFailure('resource_unavailable', 'the agent has custom tools, which reach Berth through a unix socket in the sandbox\'s egress directory; this installation\'s sandboxes have none (the Kubernetes runtime): run the agent without custom tools, or on Docker sandboxes');
    }
    await this.deps.customTools.serve(this.turn.session_id, this.turn.sandbox_id);
  }

  /** The session's resources the sandbox lacks, put in place; one that cannot be fails the turn before its harness starts. */
  private async mountResources(): Promise<void> {
    const { owner_id, session_id, sandbox_id, resources } = this.turn;
    try {
      await this.deps.files.mount({ ownerId: owner_id, sessionId: session_id, sandboxId: sandbox_id }, resources);
    } catch (error) {
      if (error instanceof ResourceUnavailable) throw new TurnFailure('resource_unavailable', error.message);
      throw error;
    }
  }

  /** The files the agent left in the outputs directory become session files before the workflow hears the turn ended. */
  private captureOutputs(): Promise<void> {
    const { owner_id, session_id, sandbox_id } = this.turn;
    return this.deps.files.captureOutputs({ ownerId: owner_id, sessionId: session_id, sandboxId: sandbox_id });
  }

  private async exitCode(): Promise<number | null> {
    // A turn abandoned after its deadline settled already; the killed process's exit code adds nothing.
    if (this.abandoned.signal.aborted || this.process === null) return null;
    return this.process.exitCode();
  }

  private reportExit(exitCode: number | null, sandbox: SandboxAfterExit): Promise<void> {
    return this.report({
      kind: 'turn_exited',
      turn_id: this.turnId,
      generation: this.generation,
      exit_code: exitCode,
      stderr: this.process?.stderrTail() ?? '',
      sandbox,
      harness_session_id: this.harnessSessionId,
      now: this.deps.now(),
    });
  }

  private report(input: TurnTerminalSeen | TurnExited | TurnNotRun): Promise<void> {
    this.recordSettled();
    return this.deps.report(input).catch((error: unknown) => this.log.error(`${input.kind} not handled`, { err: error }));
  }

  /**
   * The harness stopped without finishing: did its container die? The exec's stream can end before
   * Docker shows the container dead, so after a kill-like end (no exit code, or a signal's) the
   * container gets a short while to show it. An interrupted turn was killed on purpose: no wait.
   */
  private async sandboxAfterExit(exitCode: number | null): Promise<SandboxAfterExit> {
    if (this.interruptAsked) return { state: 'running' };
    const killed = exitCode === null || exitCode >= 128;
    const deadline = Date.now() + (killed ? this.deps.tuning.deathSettleMs : 0);
    let info = await this.inspect();
    while (info?.running && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      info = await this.inspect();
    }
    if (info?.running) return { state: 'running' };
    this.log.warn('the sandbox is gone; the turn is left to sandbox-death recovery');
    const owner = info === null ? null : sandboxOwner(info.name, info.labels);
    return {
      state: 'dead',
      sandbox_id: this.turn.sandbox_id,
      generation: owner?.kind === 'session' ? owner.generation : this.generation,
      cause: info === null ? 'destroy' : info.oomKilled ? 'oom' : 'die',
      exit_code: info?.exitCode ?? null,
    };
  }

  private inspect(): Promise<SandboxInfo | null> {
    return this.deps.runtime.inspect(this.turn.sandbox_id).catch(() => null);
  }

  private async kill(signal: 'INT' | 'TERM'): Promise<void> {
    try {
      await TurnProcess.kill({ runtime: this.deps.runtime, sandboxId: this.turn.sandbox_id, turnId: this.turnId }, signal);
    } catch (error) {
      this.log.warn('could not signal the harness', { err: error });
    }
  }

  private async plan(model: ModelSettings): Promise<{ plan: TurnPlan; env: Record<string, string> }> {
    // A sandbox this process already ran a turn in has the harness's files; a new one gets them from the mirror.
    if (this.resumeId !== null && !this.deps.restored.has(this.turn.sandbox_id)) await this.restoreTranscript(this.resumeId);
    this.deps.restored.add(this.turn.sandbox_id);
    const agent = await this.deps.agent();
    const { id, version } = this.turn.agent;
    if (agent === null) throw new TurnFailure('harness_failed', `agent ${id} version ${version}, which the session pinned, is not in the store`);
    let plan: TurnPlan;
    try {
      plan = this.deps.adapter.buildTurn({
        prompt: this.turn.prompt,
        agent,
        resumeId: this.resumeId,
        model: { baseUrl: model.baseUrl, apiKeyEnv: model.apiKeyEnv },
        cwd: SANDBOX_WORKDIR,
        home: SANDBOX_HOME,
      });
    } catch (error) {
      throw new TurnFailure('harness_failed', error instanceof Error ? error.message : String(error));
    }
    // The harness's key variables hold a placeholder: the egress adds the real key to its model requests.
    // Vault variables go first: a credential cannot take the name of a variable the harness needs (and the API refuses the platform's names).
    const env: Record<string, string> = { ...(await this.deps.vaultVariables()), ...plan.env };
    for (const name of Object.keys(plan.secretEnv)) env[name] = MODEL_KEY_PLACEHOLDER;
    return { plan, env };
  }

  /**
   * Writes the mirrored transcript into a sandbox this process has not run a turn in. When the
   * conversation's transcript is still missing (its sandbox died before any was mirrored), the
   * harness cannot resume it: the turn starts a new harness conversation instead.
   */
  private async restoreTranscript(resumeId: string): Promise<void> {
    const { sandbox_id, session_id } = this.turn;
    const restored = await this.deps.transcripts.restore(sandbox_id, session_id);
    if (restored > 0) this.log.info(`restored ${restored} transcript file(s) into the sandbox`, { files: restored });
    if (await this.deps.transcripts.present(sandbox_id, this.deps.adapter.transcriptLocations(SANDBOX_HOME, SANDBOX_WORKDIR, resumeId))) return;
    this.log.warn('no transcript of the harness conversation in the sandbox (none was mirrored before its sandbox was lost): starting a new harness conversation', {
      harness_session_id: resumeId,
    });
    this.resumeId = null;
    this.harnessSessionId = null;
  }
}
