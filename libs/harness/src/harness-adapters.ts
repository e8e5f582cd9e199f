import { ValidationError } from '@berth/core';
import type { HarnessKind } from '@berth/contracts';
import { ClaudeCodeAdapter } from './claude-code/claude-code.adapter';
import { CodexAdapter } from './codex/codex.adapter';
import { DeepSeekHarnessAdapter } from './deepseek-harness/deepseek-harness.adapter';
import { boundAgentOutput } from './bounded-output';
import type { HarnessAdapter, ParseStep } from './harness-adapter.port';
import { HermesAdapter } from './hermes/hermes.adapter';
import { PiAdapter } from './pi/pi.adapter';

/**
 * An adapter whose outputs are each kept under the payload limit (`boundAgentOutput`), whatever
 * the harness printed: one place for the live stream and for a recovery from the output file.
 */
class BoundedOutputs implements HarnessAdapter {
  constructor(private readonly inner: HarnessAdapter) {}
  get kind() {
    return this.inner.kind;
  }
  get capabilities() {
    return this.inner.capabilities;
  }
  buildTurn: HarnessAdapter['buildTurn'] = (input) => this.inner.buildTurn(input);
  initialState: HarnessAdapter['initialState'] = (mode, prompt) => this.inner.initialState(mode, prompt);
  answerConfirmation: HarnessAdapter['answerConfirmation'] = (pending, decision) => this.inner.answerConfirmation(pending, decision);
  interruptLine: HarnessAdapter['interruptLine'] = () => this.inner.interruptLine();
  transcriptLocations: HarnessAdapter['transcriptLocations'] = (home, cwd, sessionId) => this.inner.transcriptLocations(home, cwd, sessionId);
  parseLine(line: string, state: Parameters<HarnessAdapter['parseLine']>[1]): ParseStep {
    const step = this.inner.parseLine(line, state);
    return step.outputs.length === 0 ? step : { ...step, outputs: step.outputs.map((o) => boundAgentOutput(o)) };
  }
}

const ADAPTERS: Readonly<Record<HarnessKind, HarnessAdapter>> = {
  'claude-code': new BoundedOutputs(new ClaudeCodeAdapter()),
  codex: new BoundedOutputs(new CodexAdapter()),
  pi: new BoundedOutputs(new PiAdapter()),
  hermes: new BoundedOutputs(new HermesAdapter()),
  'deepseek-harness': new BoundedOutputs(new DeepSeekHarnessAdapter()),
};

/** The adapter for a harness kind. */
export function harnessAdapterFor(kind: HarnessKind): HarnessAdapter {
  const adapter = ADAPTERS[kind] as HarnessAdapter | undefined;
  if (adapter === undefined) throw new ValidationError(`unknown harness ${String(kind)}`, 'harness');
  return adapter;
}
