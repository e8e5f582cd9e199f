export * from './harness-adapter.port';
export * from './harness-adapters';
export * from './parse-state';
export { ClaudeCodeAdapter } from './claude-code/claude-code.adapter';
export { claudeProjectKey } from './claude-code/claude-project-key';
export { CodexAdapter } from './codex/codex.adapter';
export { PiAdapter, piSessionDirName } from './pi/pi.adapter';
export { HermesAdapter } from './hermes/hermes.adapter';
export { DeepSeekHarnessAdapter } from './deepseek-harness/deepseek-harness.adapter';
