import { AgentOutputSchema, type AgentOutput, type PermissionMode } from '@berth/contracts';
import type { HarnessAdapter, PendingConfirmation, TurnTerminal } from '../harness-adapter.port';

export interface Replay {
  readonly outputs: readonly AgentOutput[];
  readonly sessionIds: readonly string[];
  readonly terminal: TurnTerminal | null;
  readonly confirmations: readonly PendingConfirmation[];
  /** Lines the adapter asked the runner to write to stdin along the way (protocol answers). */
  readonly stdinLines: readonly string[];
}

/**
 * Feeds recorded stdout lines through an adapter, as the runner does, and collects what it
 * produced. Every output must pass the kernel's `AgentOutput` schema, or the replay throws.
 */
export function replay(adapter: HarnessAdapter, lines: readonly string[], mode: PermissionMode = 'always_allow', prompt?: string): Replay {
  let state = adapter.initialState(mode, prompt);
  const outputs: AgentOutput[] = [];
  const stdinLines: string[] = [];
  const sessionIds: string[] = [];
  const confirmations: PendingConfirmation[] = [];
  let terminal: TurnTerminal | null = null;
  for (const line of lines) {
    const step = adapter.parseLine(line, state);
    state = step.state;
    outputs.push(...step.outputs.map((output) => AgentOutputSchema.parse(output)));
    if (step.harnessSessionId !== undefined) sessionIds.push(step.harnessSessionId);
    if (step.confirmation !== undefined) confirmations.push(step.confirmation);
    if (step.terminal !== undefined) terminal = step.terminal;
    stdinLines.push(...(step.stdinLines ?? []));
  }
  return { outputs, sessionIds: [...new Set(sessionIds)], terminal, confirmations, stdinLines };
}

/** A compact view of outputs for assertions: `kind` or `kind:detail`. */
export function summarize(outputs: readonly AgentOutput[]): string[] {
  return outputs.map((o) => {
    switch (o.kind) {
      case 'message':
        return `message:${o.content.map((b) => (b.type === 'text' ? b.text : b.type)).join('')}`;
      case 'tool_use':
        return `tool_use:${o.name}${o.needs_confirmation ? ':ask' : ''}`;
      case 'mcp_tool_use':
        return `mcp_tool_use:${o.server_name}.${o.name}${o.needs_confirmation ? ':ask' : ''}`;
      case 'tool_result':
      case 'mcp_tool_result':
        return `${o.kind}${o.is_error ? ':error' : ''}`;
      default:
        return o.kind;
    }
  });
}
