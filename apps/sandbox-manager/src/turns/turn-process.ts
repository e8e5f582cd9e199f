import type { TurnPlan } from '@berth/harness';
import type { ExecHandle, SandboxRuntime } from '@berth/ports';
import { posix } from 'node:path';
import { execAndCollect } from '../sandboxes/sandbox-exec';
import {
  followOutputCommand,
  harnessExecCommand,
  killTurnCommand,
  parseTurnStatus,
  STDIN_END,
  turnFiles,
  turnStatusCommand,
  wholeLines,
  type StdinMode,
  type TurnProcessStatus,
} from './turn-files';

type Where = Readonly<{ runtime: SandboxRuntime; sandboxId: string; turnId: string }>;

/**
 * One harness process in a sandbox: started here, or found running (or finished) after an earlier
 * manager process started it. Its output is the turn's output file (replayed, then followed); its
 * stdin is the turn's stdin file, which outlives this process, so a restarted manager writes to
 * the same harness. Knows nothing of what the lines mean.
 */
export class TurnProcess {
  private stdinEnded = false;
  /** Writes to the stdin file, one at a time and in order. */
  private writes: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly where: Where,
    /** Lines an earlier process already saw the harness print (a reattach replays them first). */
    private readonly replayed: readonly string[],
    private readonly handle: ExecHandle | null,
    private readonly stdin: StdinMode,
    private readonly status: TurnProcessStatus | null,
  ) {}

  /** The status an earlier process left in the sandbox, or null when no harness ever started for the turn. */
  static async find(where: Where): Promise<TurnProcessStatus | null> {
    return parseTurnStatus((await execAndCollect(where.runtime, where.sandboxId, turnStatusCommand(where.turnId))).lines[0]);
  }

  /** Writes the plan's files (when it has any), then starts the harness, its first input sent along with the exec. */
  static async start(where: Where, plan: TurnPlan, env: Readonly<Record<string, string>>, workdir: string): Promise<TurnProcess> {
    const { runtime, sandboxId, turnId } = where;
    if (plan.files.length > 0) {
      await execAndCollect(runtime, sandboxId, ['mkdir', '-p', ...new Set(plan.files.map((f) => posix.dirname(f.path)))]);
      for (const file of plan.files) await runtime.writeFile(sandboxId, file.path, file.content, 0o600);
    }
    const stdin: StdinMode = plan.keepStdinOpen ? 'follow' : 'file';
    const input = plan.stdinLines.map((l) => `${l}\n`).join('');
    const handle = await runtime.exec(sandboxId, { cmd: harnessExecCommand(turnId, stdin, Buffer.byteLength(input), plan.argv), env, workdir });
    handle.write(input);
    // A `follow` harness's exec keeps its stdin for the end line.
    if (stdin === 'file') handle.closeStdin();
    return new TurnProcess(where, [], handle, stdin, null);
  }

  /** Picks up a harness an earlier process started: what it printed so far, then (while it runs) what it prints next. */
  static async attach(where: Where, status: TurnProcessStatus): Promise<TurnProcess> {
    const { lines, bytes } = wholeLines(await where.runtime.readFile(where.sandboxId, turnFiles(where.turnId).output));
    const handle = status.alive ? await where.runtime.exec(where.sandboxId, { cmd: followOutputCommand(where.turnId, bytes, status.pid), stdin: '' }) : null;
    return new TurnProcess(where, lines, handle, 'follow', status);
  }

  async *lines(): AsyncIterable<string> {
    yield* this.replayed;
    if (this.handle !== null) yield* this.handle.lines;
  }

  /** The harness's exit code once its output ended (null when unknown, e.g. it was killed or is still exiting). */
  async exitCode(): Promise<number | null> {
    if (this.handle === null) return this.status?.exitCode ?? null;
    if (this.status !== null) return (await TurnProcess.find(this.where))?.exitCode ?? null;
    const timeout = new Promise<null>((resolve) => setTimeout(() => resolve(null), 2_000).unref());
    return Promise.race([this.handle.exit.catch(() => null), timeout]);
  }

  stderrTail(): string {
    return this.handle?.stderrTail?.().trim().split('\n').slice(-5).join('\n') ?? '';
  }

  /** The harness reads stdin lines written now (interrupts, answers); false when it does not read any. */
  get readsStdin(): boolean {
    return this.stdin === 'follow' && !this.stdinEnded;
  }

  write(line: string): Promise<void> {
    return this.serially(() => appendStdin(this.where, line));
  }

  /** A protocol answer the harness asked for: written unless an earlier process wrote it already. */
  writeOnce(line: string): Promise<void> {
    return this.serially(async () => void (await writeStdinOnce(this.where, line)));
  }

  /**
   * Ends the harness's input (it finishes once it read everything before): on the exec's stdin when
   * this process started the harness (no Docker call), else in the stdin file.
   */
  endStdin(): Promise<void> {
    if (!this.readsStdin) return Promise.resolve();
    const handle = this.status === null ? this.handle : null;
    const ended = this.serially(async () => {
      if (handle === null) return appendStdin(this.where, STDIN_END);
      handle.write(`${STDIN_END}\n`);
      handle.closeStdin();
    });
    this.stdinEnded = true;
    return ended;
  }

  private serially(write: () => Promise<void>): Promise<void> {
    if (!this.readsStdin) return Promise.resolve();
    const next = this.writes.then(write);
    this.writes = next.catch(() => undefined);
    return next;
  }

  /** Signals the turn's process group: `signal`, then KILL after the grace. */
  static async kill(where: Where, signal: 'INT' | 'TERM', graceSeconds = 0.3): Promise<void> {
    await execAndCollect(where.runtime, where.sandboxId, killTurnCommand(where.turnId, signal, graceSeconds));
  }
}

const appendStdin = (where: Where, line: string): Promise<void> => where.runtime.appendFile(where.sandboxId, turnFiles(where.turnId).stdin, `${line}\n`);

/**
 * Appends a line to a turn's stdin unless it is there already: an answer delivered twice (a
 * redelivery, or two processes) reaches the harness once. Works whoever started the harness.
 */
export async function writeStdinOnce(where: Where, line: string): Promise<'written' | 'already'> {
  const { lines } = wholeLines(await where.runtime.readFile(where.sandboxId, turnFiles(where.turnId).stdin));
  if (lines.includes(line)) return 'already';
  await appendStdin(where, line);
  return 'written';
}
