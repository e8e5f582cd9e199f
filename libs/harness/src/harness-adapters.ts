import { ValidationError } from '@berth/core';
import type { HarnessKind } from '@berth/contracts';
import { ClaudeCodeAdapter } from './claude-code/claude-code.adapter';
import { CodexAdapter } from './codex/codex.adapter';
import { DeepSeekHarnessAdapter } from './deepseek-harness/deepseek-harness.adapter';
import type { HarnessAdapter } from './harness-adapter.port';
import { HermesAdapter } from './hermes/hermes.adapter';
import { PiAdapter } from './pi/pi.adapter';

const ADAPTERS: Readonly<Record<HarnessKind, HarnessAdapter>> = {
  'claude-code': new ClaudeCodeAdapter(),
  codex: new CodexAdapter(),
  pi: new PiAdapter(),
  hermes: new HermesAdapter(),
  'deepseek-harness': new DeepSeekHarnessAdapter(),
};

/** The adapter for a harness kind. */
export function harnessAdapterFor(kind: HarnessKind): HarnessAdapter {
  const adapter = ADAPTERS[kind] as HarnessAdapter | undefined;
  if (adapter === undefined) throw new ValidationError(`unknown harness ${String(kind)}`, 'harness');
  return adapter;
}
