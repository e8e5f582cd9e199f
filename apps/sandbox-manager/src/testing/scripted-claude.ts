import type { ExecScript, InMemorySandboxRuntime } from '@berth/testing';
import { turnFiles, wholeLines } from '../turns/turn-files';

/**
 * A light stand-in for Claude Code in `always_ask`, for the in-memory runtime: it speaks the same
 * stream-json lines (the real adapter parses them), asks `can_use_tool` before its one Bash call,
 * and then reads the turn's stdin file — as the real CLI reads it through the exec script's feed —
 * until it finds the answer (tool result and closing text) or the interrupt line (an aborted
 * result). Like the exec script it also appends what it prints to the turn's output file, answers
 * the status command (`pid alive|dead exit`) and serves the output file to a reattaching `tail -f`
 * until it ends; a group kill in the sandbox ends it at once with 130, its container's removal with 137. Used where the real CLI is
 * too heavy: dozens of turns held open on one 2-core machine.
 */
export type ScriptedClaudeOptions = Readonly<{
  /** A text it says before its tool call. */
  preface?: string;
  /** Awaited after the tool's result and before the closing text, with the harness's run of the turn (1 for its first harness). */
  beforeClosing?: (turnId: string, run: number) => Promise<void>;
}>;

const key = (container: string, turnId: string) => `${container}/${turnId}`;

export class ScriptedClaude {
  /** Turns whose harness started, in order. */
  readonly started: string[] = [];
  /** By container and turn (`key`): a turn continued in a new sandbox runs a harness of its own there. */
  private readonly killed = new Set<string>();
  private readonly finished = new Map<string, number>();
  private readonly running = new Set<string>();

  constructor(
    private readonly runtime: () => InMemorySandboxRuntime,
    private readonly options: ScriptedClaudeOptions = {},
  ) {}

  readonly script: ExecScript = async ({ container, spec, emit }) => {
    const cmd = spec.cmd.join(' ');
    const turnOf = (pattern: RegExp) => pattern.exec(cmd)?.[1] ?? '';
    if (cmd.includes('kill -s')) {
      this.killed.add(key(container, turnOf(/turns\/([^']+)\.pid/)));
      return { lines: [], exitCode: 0 };
    }
    if (cmd.includes('kill -0')) {
      const at = key(container, turnOf(/turns\/([^']+)\.pid/));
      if (!this.running.has(at)) return { lines: [], exitCode: 0 };
      const exit = this.finished.get(at);
      return { lines: [exit === undefined ? '1 alive -' : `1 dead ${exit}`], exitCode: 0 };
    }
    if (spec.cmd[0] === 'tail') return this.follow(container, turnOf(/turns\/(.+)\.jsonl$/), Number(spec.cmd[2]?.slice(1)) - 1, emit);
    if (spec.cmd[3] !== 'berth-turn') return { lines: [], exitCode: 0 };
    const turnId = spec.cmd[5];
    this.started.push(turnId);
    this.running.add(key(container, turnId));
    const exitCode = await this.harness(container, turnId, (o) => {
      const line = JSON.stringify(o);
      emit(line);
      return this.runtime().appendFile(container, turnFiles(turnId).output, `${line}\n`);
    });
    this.finished.set(key(container, turnId), exitCode);
    return { lines: [], exitCode };
  };

  private async harness(container: string, turnId: string, line: (o: object) => Promise<void>): Promise<number> {
    const session = `h-${turnId}`;
    const run = this.started.filter((t) => t === turnId).length;
    await line({ type: 'system', subtype: 'init', session_id: session });
    if (this.options.preface !== undefined) await line({ type: 'assistant', message: { content: [{ type: 'text', text: this.options.preface }] }, parent_tool_use_id: null });
    await line({ type: 'assistant', message: { content: [{ type: 'tool_use', id: `toolu_${turnId}`, name: 'Bash', input: { command: 'echo hi' } }] }, parent_tool_use_id: null });
    await line({ type: 'control_request', request_id: `req_${turnId}`, request: { subtype: 'can_use_tool', tool_name: 'Bash', tool_use_id: `toolu_${turnId}`, input: { command: 'echo hi' } } });
    for (;;) {
      if (this.killed.has(key(container, turnId))) return 130;
      // Its container removed (a pause, a terminate): Docker ends the exec with it.
      if ((await this.runtime().inspect(container)) === null) return 137;
      const stdin = this.stdinOf(await this.runtime().readFile(container, turnFiles(turnId).stdin));
      const interrupted = stdin.some((m) => m['type'] === 'control_request' && (m['request'] as { subtype?: string } | undefined)?.subtype === 'interrupt');
      const answer = stdin.find((m) => m['type'] === 'control_response');
      if (interrupted) {
        await line({ type: 'result', subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_tools', session_id: session, usage: { input_tokens: 1, output_tokens: 1 } });
        return 0;
      }
      if (answer !== undefined) {
        const allowed = ((answer['response'] as { response?: { behavior?: string } }).response?.behavior ?? '') === 'allow';
        await line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: `toolu_${turnId}`, content: allowed ? 'hi' : 'denied', is_error: !allowed }] }, parent_tool_use_id: null });
        await this.options.beforeClosing?.(turnId, run);
        await line({ type: 'assistant', message: { content: [{ type: 'text', text: allowed ? 'Done.' : 'Not run.' }] }, parent_tool_use_id: null });
        await line({ type: 'result', subtype: 'success', is_error: false, session_id: session, usage: { input_tokens: 1, output_tokens: 1 } });
        return 0;
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** How many answers the harness's stdin file holds: an answer delivered twice must reach it once. */
  async answersIn(container: string, turnId: string): Promise<number> {
    return this.stdinOf(await this.runtime().readFile(container, turnFiles(turnId).stdin)).filter((m) => m['type'] === 'control_response').length;
  }

  private stdinOf(file: Buffer | null): Record<string, unknown>[] {
    return wholeLines(file)
      .lines.filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  /** `tail -c +N -f --pid`: the output file from byte N, then what it gains, until the harness ended. */
  private async follow(container: string, turnId: string, fromByte: number, emit: (line: string) => void): Promise<{ lines: readonly string[]; exitCode: number }> {
    let offset = fromByte;
    for (;;) {
      const done = this.finished.has(key(container, turnId)) || this.killed.has(key(container, turnId));
      const file = (await this.runtime().readFile(container, turnFiles(turnId).output)) ?? Buffer.alloc(0);
      const { lines, bytes } = wholeLines(file.subarray(offset));
      for (const line of lines) emit(line);
      offset += bytes;
      if (done) return { lines: [], exitCode: 0 };
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}
