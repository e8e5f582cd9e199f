import type { ExecScript, InMemorySandboxRuntime } from '@berth/testing';
import { turnFiles, wholeLines } from '../turns/turn-files';

/**
 * A light stand-in for Claude Code in `always_ask`, for the in-memory runtime: it speaks the same
 * stream-json lines (the real adapter parses them), asks `can_use_tool` before its one Bash call,
 * and then reads the turn's stdin file — as the real CLI reads it through the exec script's feed —
 * until it finds the answer (tool result and closing text) or the interrupt line (an aborted
 * result). A group kill in the sandbox ends it at once with 130. Used where the real CLI is too
 * heavy: dozens of turns held open on one 2-core machine.
 */
export class ScriptedClaude {
  /** Turns whose harness started, in order. */
  readonly started: string[] = [];
  private readonly killed = new Set<string>();

  constructor(private readonly runtime: () => InMemorySandboxRuntime) {}

  readonly script: ExecScript = async ({ container, spec, emit }) => {
    if (spec.cmd.join(' ').includes('kill -s')) {
      const turnId = /turns\/([^']+)\.pid/.exec(spec.cmd.join(' '))?.[1];
      if (turnId !== undefined) this.killed.add(turnId);
      return { lines: [], exitCode: 0 };
    }
    if (spec.cmd[3] !== 'berth-turn') return { lines: [], exitCode: 0 };
    const turnId = spec.cmd[5];
    this.started.push(turnId);
    const session = `h-${turnId}`;
    const line = (o: object) => emit(JSON.stringify(o));
    line({ type: 'system', subtype: 'init', session_id: session });
    line({ type: 'assistant', message: { content: [{ type: 'tool_use', id: `toolu_${turnId}`, name: 'Bash', input: { command: 'echo hi' } }] }, parent_tool_use_id: null });
    line({ type: 'control_request', request_id: `req_${turnId}`, request: { subtype: 'can_use_tool', tool_name: 'Bash', tool_use_id: `toolu_${turnId}`, input: { command: 'echo hi' } } });
    for (;;) {
      if (this.killed.has(turnId)) return { lines: [], exitCode: 130 };
      const stdin = wholeLines(await this.runtime().readFile(container, turnFiles(turnId).stdin)).lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
      const interrupted = stdin.some((m) => m['type'] === 'control_request' && (m['request'] as { subtype?: string } | undefined)?.subtype === 'interrupt');
      const answer = stdin.find((m) => m['type'] === 'control_response');
      if (interrupted) {
        line({ type: 'result', subtype: 'error_during_execution', is_error: true, terminal_reason: 'aborted_tools', session_id: session, usage: { input_tokens: 1, output_tokens: 1 } });
        return { lines: [], exitCode: 0 };
      }
      if (answer !== undefined) {
        const allowed = ((answer['response'] as { response?: { behavior?: string } }).response?.behavior ?? '') === 'allow';
        line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: `toolu_${turnId}`, content: allowed ? 'hi' : 'denied', is_error: !allowed }] }, parent_tool_use_id: null });
        line({ type: 'assistant', message: { content: [{ type: 'text', text: allowed ? 'Done.' : 'Not run.' }] }, parent_tool_use_id: null });
        line({ type: 'result', subtype: 'success', is_error: false, session_id: session, usage: { input_tokens: 1, output_tokens: 1 } });
        return { lines: [], exitCode: 0 };
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
}
