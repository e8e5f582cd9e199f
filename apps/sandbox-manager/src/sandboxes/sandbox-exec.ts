import type { SandboxRuntime } from '@berth/ports';

export type ExecResult = Readonly<{ lines: readonly string[]; exitCode: number; stderr: string }>;

/** Runs a short command in the sandbox and collects its output (listing files, signalling processes). */
export async function execAndCollect(runtime: SandboxRuntime, sandboxId: string, cmd: readonly string[]): Promise<ExecResult> {
  const handle = await runtime.exec(sandboxId, { cmd, stdin: '' });
  const lines: string[] = [];
  for await (const line of handle.lines) lines.push(line);
  const exitCode = await handle.exit;
  return { lines, exitCode, stderr: handle.stderrTail?.() ?? '' };
}
