import type { AgentOutput, SessionCommand } from '@berth/contracts';
import { harnessAdapterFor, type ConfirmationDecision, type HarnessAdapter, type ParseState, type PendingConfirmation, type TurnPlan, type TurnTerminal } from '@berth/harness';
import type { CommandBus, ExecHandle, Logger, SandboxInfo, SandboxRuntime } from '@berth/ports';
import { inSpan, secondsSince, type SandboxMetrics } from '@berth/telemetry';
import { SANDBOX_HOME, SANDBOX_WORKDIR, sandboxOwner } from '@berth/sandbox-domain';
import { posix } from 'node:path';
import type { CrashPoints } from '../config/crash-points';
import { execAndCollect } from '../sandboxes/sandbox-exec';
import type { ManagerCommands } from '../sessions/manager-commands';
import { sendReliably } from '../sessions/send-reliably';
import { sandboxDiedCommand } from '../watchers/sandbox-died-command';
import { OutputBatcher, type OutputBatch } from './output-batcher';
import type { RunningTurns, TurnControl } from './running-turns';
import { NO_MODEL_MESSAGE, noKeyMessage, TurnFailure, type TurnAssignment } from './turn-assignment';
import { followOutputCommand, harnessExecCommand, killTurnCommand, parseTurnStatus, turnFiles, turnStatusCommand, type TurnProcessStatus } from './turn-files';
import type { TranscriptSync } from './transcript-sync';

export type TurnRunnerDeps = Readonly<{
  runtime: SandboxRuntime;
  bus: CommandBus;
  commands: ManagerCommands;
  transcripts: TranscriptSync;
  running: RunningTurns;
  /** A secret's value by name (the model key); null when not configured. */
  secret: (name: string) => string | null;
  crash: CrashPoints;
  log: Logger;
  metrics: Pick<SandboxMetrics, 'turnSeconds'>;
  adapterFor?: (kind: TurnAssignment['harness']) => HarnessAdapter;
  tuning?: Partial<TurnTuning>;
}>;

export type TurnTuning = Readonly<{
  batchMaxOutputs: number;
  batchDelayMs: number;
  /** After an interrupt line, how long the harness gets to stop by itself before its group is killed. */
  interruptGraceMs: number;
  /** After an interrupt, the turn settles by this time whatever the harness does. */
  interruptDeadlineMs: number;
  /** Transcript mirror period while the turn runs (also during silent tool steps). */
  mirrorEveryMs: number;
  /** How long an exec that ended without a terminal line waits for Docker to show its container dead. */
  deathSettleMs: number;
}>;

const DEFAULT_TUNING: TurnTuning = { batchMaxOutputs: 50, batchDelayMs: 40, interruptGraceMs: 600, interruptDeadlineMs: 1_500, mirrorEveryMs: 1_000, deathSettleMs: 1_000 };

/**
 * Runs harness turns in their sandboxes. One `run` per turn and process: a redelivered
 * `TurnStarted` for a turn already running here joins it, and one whose harness was started by a
 * previous process (its output file exists in the sandbox) is reattached from the last offset the
 * kernel recorded instead of being started twice.
 */
export class TurnRunner {
  private readonly tuning: TurnTuning;
  /** Sandboxes whose transcript files this process already restored or saw a turn write. */
  private readonly restored = new Set<string>();

  constructor(private readonly deps: TurnRunnerDeps) {
    this.tuning = { ...DEFAULT_TUNING, ...deps.tuning };
  }

  run(assignment: TurnAssignment): Promise<void> {
    const current = this.deps.running.get(assignment.sessionId);
    if (current?.turnId === assignment.turnId) return current.done;
    // A turn that settled at its terminal line may still be exiting: the next one starts after it.
    const previous = current?.done.catch(() => undefined) ?? Promise.resolve();
    const turn = new ActiveTurn(assignment, this.deps, this.tuning, this.restored, previous);
    this.deps.running.set(assignment.sessionId, turn);
    return turn.done;
  }
}

class ActiveTurn implements TurnControl {
  readonly turnId: string;
  readonly generation: number;
  readonly done: Promise<void>;
  attached = false;

  private readonly adapter: HarnessAdapter;
  private readonly batcher: OutputBatcher;
  private state: ParseState;
  private harnessSessionId: string | null;
  private terminal: TurnTerminal | null = null;
  private handle: ExecHandle | null = null;
  private stdinOpen = false;
  private interrupted = false;
  private streamEnded = false;
  private readonly pending = new Map<string, PendingConfirmation>();
  private abandon: () => void = () => undefined;
  private readonly abandoned = new Promise<'abandoned'>((resolve) => (this.abandon = () => resolve('abandoned')));
  /** Every line about this turn names its session, turn and sandbox. */
  private readonly log: Logger;
  private settling: Promise<void> | null = null;
  private abandonedStream = false;
  private mirroring: Promise<void> = Promise.resolve();
  private mirrorInFlight = false;
  private mirrorTimer: NodeJS.Timeout | null = null;
  /** The harness conversation this turn resumes: null when its transcript is not in the sandbox. */
  private resumeId: string | null;

  constructor(
    private readonly a: TurnAssignment,
    private readonly deps: TurnRunnerDeps,
    private readonly tuning: TurnTuning,
    private readonly restored: Set<string>,
    previous: Promise<void>,
  ) {
    this.turnId = a.turnId;
    this.generation = a.generation;
    this.log = deps.log.child({ session_id: a.sessionId, turn_id: a.turnId, sandbox_id: a.sandboxId });
    this.adapter = (deps.adapterFor ?? harnessAdapterFor)(a.harness);
    this.state = this.adapter.initialState(a.permissionMode);
    this.resumeId = a.resumeId;
    this.harnessSessionId = a.resumeId;
    this.batcher = new OutputBatcher({
      lastRecordedOffset: a.lastRecordedOffset,
      maxOutputs: tuning.batchMaxOutputs,
      delayMs: tuning.batchDelayMs,
      send: (batch) => this.sendBatch(batch),
      onError: (error) => this.log.error('output batch not recorded', { reason: this.redact(String(error)) }),
    });
    this.done = previous
      .then(() => this.traced())
      .finally(() => {
        this.stopMirrorTimer();
        deps.running.delete(a.sessionId, this);
      });
  }

  interrupt(): void {
    if (this.interrupted) return;
    this.interrupted = true;
    const line = this.adapter.interruptLine();
    const polite = line !== null && this.stdinOpen && this.handle !== null;
    if (polite) this.handle?.write(`${line}\n`);
    const killAfter = polite ? this.tuning.interruptGraceMs : 0;
    setTimeout(() => {
      if (!this.streamEnded) void this.killGroup(polite ? 'TERM' : 'INT');
    }, killAfter).unref();
    setTimeout(() => this.abandon(), this.tuning.interruptDeadlineMs).unref();
  }

  confirm(harnessToolUseId: string, decision: ConfirmationDecision): boolean {
    const pending = this.pending.get(harnessToolUseId);
    if (pending === undefined || this.handle === null || !this.stdinOpen) return false;
    const answer = this.adapter.answerConfirmation(pending, decision);
    if (answer === null) return false;
    this.pending.delete(harnessToolUseId);
    this.handle.write(`${answer}\n`);
    return true;
  }

  /** The turn as one span and one duration, from harness start (or reattach) to settled. */
  private traced(): Promise<void> {
    const start = process.hrtime.bigint();
    this.log.info('turn started', { harness: this.a.harness, reattach: this.a.mayHaveStarted });
    return inSpan('turn', { attributes: { 'berth.session_id': this.a.sessionId, 'berth.turn_id': this.a.turnId, 'berth.harness': this.a.harness } }, () => this.execute()).finally(() => {
      const seconds = secondsSince(start);
      this.deps.metrics.turnSeconds.observe({ harness: this.a.harness }, seconds);
      this.log.info('turn settled', { seconds: Math.round(seconds * 1000) / 1000 });
    });
  }

  private async execute(): Promise<void> {
    let exitCode: number | null = null;
    try {
      const status = this.a.mayHaveStarted ? await this.processStatus() : null;
      exitCode = status === null ? await this.startFresh() : await this.reattach(status);
    } catch (error) {
      this.stopMirrorTimer();
      if (this.settling !== null) return this.settling;
      await this.batcher.flush();
      if (!(error instanceof TurnFailure) && (await this.sandboxGone(null))) return;
      const failure = error instanceof TurnFailure ? error : new TurnFailure('harness_failed', `the harness could not run: ${error instanceof Error ? error.message : String(error)}`);
      return this.settle(this.failTurn(failure));
    }
    this.stopMirrorTimer();
    if (this.settling !== null) {
      await this.settling;
      // The harness may append to its transcript while it exits: mirror the rest.
      await this.mirrorTranscript(true);
      return;
    }
    await this.batcher.flush();
    if (!this.interrupted && (await this.sandboxGone(exitCode))) return;
    await this.mirrorTranscript(true);
    this.deps.crash.reached('after-turn-end-before-complete');
    await this.settle(this.outcome(exitCode));
  }

  /**
   * The harness stopped without finishing because its container died: not a harness failure.
   * The exec's stream can end before Docker shows the container dead (and before the death
   * watcher sees its `die`), so after a kill-like end (no exit code, or a signal's) the container
   * gets a short while to show it; a dead one is
   * reported here too (the same command id as the watcher's: the kernel applies it once) and the
   * kernel hands the turn to sandbox-loss recovery.
   */
  private async sandboxGone(exitCode: number | null): Promise<boolean> {
    const killed = exitCode === null || exitCode >= 128;
    const deadline = Date.now() + (killed ? this.tuning.deathSettleMs : 0);
    let info = await this.inspectSandbox();
    while (info?.running && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      info = await this.inspectSandbox();
    }
    if (info?.running) return false;
    this.log.warn('the sandbox is gone; the turn is left to sandbox-death recovery');
    const owner = info === null ? null : sandboxOwner(info.name, info.labels);
    const generation = owner?.kind === 'session' ? owner.generation : this.a.generation;
    await sendReliably(
      this.deps.bus,
      sandboxDiedCommand(this.deps.commands, {
        sessionId: this.a.sessionId,
        sandboxId: this.a.sandboxId,
        generation,
        cause: info === null ? 'destroy' : info.oomKilled ? 'oom' : 'die',
        exitCode: info?.exitCode ?? null,
      }),
      this.deps.log,
    );
    return true;
  }

  private inspectSandbox(): Promise<SandboxInfo | null> {
    return this.deps.runtime.inspect(this.a.sandboxId).catch(() => null);
  }

  /**
   * The harness printed its terminal line: the turn is over for the user even while the process
   * exits. The next turn of the session waits for this one's `done` (exit and last mirror).
   */
  private async settleOnTerminal(): Promise<void> {
    await Promise.all([this.batcher.flush(), this.mirrorTranscript(false, true)]);
    this.deps.crash.reached('after-turn-end-before-complete');
    await this.settle(this.outcome(null));
  }

  private outcome(exitCode: number | null): SessionCommand {
    if (this.interrupted || this.terminal?.interrupted) return this.completeTurn(true);
    if (this.terminal?.ok) return this.completeTurn(false);
    if (this.terminal) return this.failTurn(new TurnFailure('model_error', this.terminal.error ?? 'the harness reported a failed turn'));
    const stderr = this.handle?.stderrTail?.().trim().split('\n').slice(-5).join('\n') ?? '';
    return this.failTurn(
      new TurnFailure('harness_failed', `the harness exited${exitCode === null ? '' : ` with code ${exitCode}`} without finishing the turn${stderr ? `: ${stderr}` : ''}`),
    );
  }

  private completeTurn(interrupted: boolean): SessionCommand {
    const { sessionId, turnId, generation } = this.a;
    return this.deps.commands.make('CompleteTurn', sessionId, `done_${sessionId}_${turnId}`, {
      turn_id: turnId,
      generation,
      interrupted,
      harness_session_id: this.harnessSessionId,
    });
  }

  private failTurn(failure: TurnFailure): SessionCommand {
    const { sessionId, turnId } = this.a;
    return this.deps.commands.make('FailTurn', sessionId, `fail_${sessionId}_${turnId}`, {
      turn_id: turnId,
      reason: failure.reason,
      message: this.redact(failure.message).slice(0, 4096),
    });
  }

  private async settle(command: SessionCommand): Promise<void> {
    await sendReliably(this.deps.bus, command, this.deps.log);
  }

  private plan(): { plan: TurnPlan; env: Record<string, string> } {
    const { model } = this.a;
    if (model.baseUrl === null) throw new TurnFailure('model_error', NO_MODEL_MESSAGE);
    const key = this.deps.secret(model.apiKeyEnv);
    if (key === null) throw new TurnFailure('model_error', noKeyMessage(model.apiKeyEnv));
    let plan: TurnPlan;
    try {
      plan = this.adapter.buildTurn({
        prompt: this.a.prompt,
        resumeId: this.resumeId,
        model: { baseUrl: model.baseUrl, apiKeyEnv: model.apiKeyEnv, ...(model.model === null ? {} : { model: model.model }) },
        permissionMode: this.a.permissionMode,
        cwd: SANDBOX_WORKDIR,
        home: SANDBOX_HOME,
      });
    } catch (error) {
      throw new TurnFailure('harness_failed', error instanceof Error ? error.message : String(error));
    }
    const env: Record<string, string> = { ...plan.env };
    for (const [name, secretName] of Object.entries(plan.secretEnv)) {
      const value = this.deps.secret(secretName);
      if (value === null) throw new TurnFailure('model_error', noKeyMessage(secretName));
      env[name] = value;
    }
    return { plan, env };
  }

  private async startFresh(): Promise<number | null> {
    const { runtime } = this.deps;
    const sandboxId = this.a.sandboxId;
    // A sandbox this process already ran a turn in has the harness's files; a new one gets them from the mirror.
    if (this.resumeId !== null && !this.restored.has(sandboxId)) await this.restoreTranscript(this.resumeId);
    this.restored.add(sandboxId);
    const { plan, env } = this.plan();
    if (plan.files.length > 0) {
      await execAndCollect(runtime, sandboxId, ['mkdir', '-p', ...new Set(plan.files.map((f) => posix.dirname(f.path)))]);
      for (const file of plan.files) await runtime.writeFile(sandboxId, file.path, file.content, 0o600);
    }
    const handle = await runtime.exec(sandboxId, { cmd: harnessExecCommand(this.a.turnId, plan.argv), env, workdir: SANDBOX_WORKDIR });
    this.handle = handle;
    this.attached = true;
    this.startMirrorTimer();
    this.stdinOpen = true;
    for (const line of plan.stdinLines) handle.write(`${line}\n`);
    if (!plan.keepStdinOpen) this.closeStdin();
    await this.consume(handle.lines);
    return this.exitOf(handle);
  }

  /**
   * Writes the mirrored transcript into a sandbox this process has not run a turn in. When the
   * conversation's transcript is still missing (its sandbox died before any was mirrored), the
   * harness cannot resume it: the turn starts a new harness conversation instead.
   */
  private async restoreTranscript(resumeId: string): Promise<void> {
    const { sandboxId, sessionId } = this.a;
    const restored = await this.deps.transcripts.restore(sandboxId, sessionId);
    if (restored > 0) this.log.info(`restored ${restored} transcript file(s) into the sandbox`, { files: restored });
    if (await this.deps.transcripts.present(sandboxId, this.adapter.transcriptLocations(SANDBOX_HOME, SANDBOX_WORKDIR, resumeId))) return;
    this.log.warn('no transcript of the harness conversation in the sandbox (none was mirrored before its sandbox was lost): starting a new harness conversation', {
      harness_session_id: resumeId,
    });
    this.resumeId = null;
    this.harnessSessionId = null;
  }

  /** A harness started by an earlier process: replay its output file, then follow it while it runs. */
  private async reattach(status: TurnProcessStatus): Promise<number | null> {
    this.log.info(`reattaching (harness ${status.alive ? 'still running' : 'ended'})`, { after_offset: this.a.lastRecordedOffset });
    const file = (await this.deps.runtime.readFile(this.a.sandboxId, turnFiles(this.a.turnId).output)) ?? Buffer.alloc(0);
    const whole = file.subarray(0, file.lastIndexOf(0x0a) + 1);
    for (const line of whole.toString('utf8').split('\n')) if (line !== '') this.onLine(line);
    if (this.terminal !== null || !status.alive) return status.exitCode;
    const handle = await this.deps.runtime.exec(this.a.sandboxId, { cmd: followOutputCommand(this.a.turnId, whole.length, status.pid), stdin: '' });
    this.handle = handle;
    this.attached = true;
    this.startMirrorTimer();
    await this.consume(handle.lines);
    return (await this.processStatus())?.exitCode ?? null;
  }

  private async processStatus(): Promise<TurnProcessStatus | null> {
    return parseTurnStatus((await execAndCollect(this.deps.runtime, this.a.sandboxId, turnStatusCommand(this.a.turnId))).lines[0]);
  }

  private async consume(lines: AsyncIterable<string>): Promise<void> {
    const iterator = lines[Symbol.asyncIterator]();
    for (;;) {
      const next = await Promise.race([iterator.next(), this.abandoned]);
      if (next === 'abandoned') this.abandonedStream = true;
      if (next === 'abandoned' || next.done) break;
      this.onLine(next.value);
    }
    this.streamEnded = true;
    this.closeStdin();
  }

  private onLine(line: string): void {
    const step = this.adapter.parseLine(line, this.state);
    this.state = step.state;
    if (step.harnessSessionId) this.harnessSessionId = step.harnessSessionId;
    this.batcher.add(step.outputs);
    if (step.confirmation) {
      this.pending.set(step.confirmation.toolUseId, step.confirmation);
      // The user must see the tool use now: it waits for them.
      void this.batcher.flush();
    }
    if (step.terminal) {
      this.terminal = step.terminal;
      this.closeStdin();
      this.settling ??= this.settleOnTerminal();
    }
  }

  private closeStdin(): void {
    if (!this.stdinOpen) return;
    this.stdinOpen = false;
    this.handle?.closeStdin();
  }

  private async exitOf(handle: ExecHandle): Promise<number | null> {
    // An interrupted turn past its deadline settles now; the killed process's exit code adds nothing.
    if (this.abandonedStream) return null;
    const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000).unref());
    return Promise.race([handle.exit.catch(() => null), timeout]);
  }

  private async killGroup(signal: 'INT' | 'TERM'): Promise<void> {
    try {
      await execAndCollect(this.deps.runtime, this.a.sandboxId, killTurnCommand(this.a.turnId, signal, 0.3));
    } catch (error) {
      this.log.warn('could not signal the harness', { err: error });
    }
  }

  private async sendBatch(batch: OutputBatch): Promise<void> {
    const { sessionId, turnId, generation } = this.a;
    const command = this.deps.commands.make('RecordAgentOutput', sessionId, `out_${sessionId}_${turnId}_g${generation}_${batch.offset}_${batch.outputs.length}`, {
      turn_id: turnId,
      generation,
      offset: batch.offset,
      outputs: batch.outputs as AgentOutput[],
      harness_session_id: this.harnessSessionId,
    });
    await sendReliably(this.deps.bus, command, this.deps.log);
    this.deps.crash.reached('mid-turn');
  }

  /**
   * Mirrors the transcript every `mirrorEveryMs` while the harness runs, output or not (a long
   * silent tool step must not leave it unmirrored); a tick while a mirror is still running is skipped.
   */
  private startMirrorTimer(): void {
    if (this.mirrorTimer !== null) return;
    this.mirrorTimer = setInterval(() => {
      if (this.mirrorInFlight) return;
      this.mirrorInFlight = true;
      void this.mirrorTranscript(false).finally(() => (this.mirrorInFlight = false));
    }, this.tuning.mirrorEveryMs);
    this.mirrorTimer.unref();
  }

  private stopMirrorTimer(): void {
    if (this.mirrorTimer === null) return;
    clearInterval(this.mirrorTimer);
    this.mirrorTimer = null;
  }

  /** Mirrors the harness transcript (serialised; failures are logged, the next mirror catches up). */
  private mirrorTranscript(final: boolean, quick = false): Promise<void> {
    const sessionId = this.harnessSessionId;
    if (sessionId === null) return this.mirroring;
    this.mirroring = this.mirroring.then(async () => {
      try {
        await this.deps.transcripts.mirrorOut(this.a.sandboxId, this.a.sessionId, this.adapter.transcriptLocations(SANDBOX_HOME, SANDBOX_WORKDIR, sessionId), quick);
      } catch (error) {
        this.log.warn(`transcript mirror${final ? ' at turn end' : ''} failed`, { err: error });
      }
    });
    return this.mirroring;
  }

  /** Keys never leave through messages: any configured secret value is masked. */
  private redact(text: string): string {
    const key = this.deps.secret(this.a.model.apiKeyEnv);
    return key && key.length >= 4 ? text.split(key).join('***') : text;
  }
}
