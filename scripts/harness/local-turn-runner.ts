import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { permissionModeOf, type AgentOutput } from '@berth/contracts';
import type { ConfirmationDecision, HarnessAdapter, PendingConfirmation, TurnInput, TurnTerminal } from '@berth/harness';

/**
 * Runs one harness turn as a host process, the way the sandbox-manager runs it in a container:
 * writes the plan's files, starts argv[0] from `binDir`, feeds stdin, parses stdout line by line.
 * For integration tests and fixture capture only.
 */
export interface LocalTurnOptions {
  readonly adapter: HarnessAdapter;
  readonly input: TurnInput;
  /** Where the harness CLIs are installed (scripts/harness/install-clis.sh prints it). */
  readonly binDir: string;
  /** Secret values by name; only the ones the plan references are passed on. */
  readonly secrets: Readonly<Record<string, string>>;
  readonly onConfirmation?: (pending: PendingConfirmation) => ConfirmationDecision;
  /** Interrupt the turn (stdin line or SIGINT, as the adapter says) once this settles. */
  readonly interruptWhen?: Promise<unknown>;
  readonly timeoutMs?: number;
}

export interface LocalTurnResult {
  readonly stdoutLines: readonly string[];
  readonly stderr: string;
  readonly outputs: readonly AgentOutput[];
  readonly harnessSessionId: string | null;
  readonly terminal: TurnTerminal | null;
  readonly exitCode: number | null;
}

export async function runLocalTurn(options: LocalTurnOptions): Promise<LocalTurnResult> {
  const { adapter, input } = options;
  const plan = adapter.buildTurn(input);
  for (const file of plan.files) {
    await mkdir(dirname(file.path), { recursive: true });
    await writeFile(file.path, file.content);
  }
  await mkdir(input.cwd, { recursive: true });
  const env: Record<string, string> = { PATH: `${options.binDir}:${process.env['PATH'] ?? ''}`, ...plan.env };
  for (const [name, secretName] of Object.entries(plan.secretEnv)) {
    const value = options.secrets[secretName];
    if (value === undefined) throw new Error(`secret ${secretName} is not provided`);
    env[name] = value;
  }
  const [command, ...args] = plan.argv;
  const child = spawn(join(options.binDir, command ?? ''), args, { cwd: input.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });

  const stdoutLines: string[] = [];
  const outputs: AgentOutput[] = [];
  let stderr = '';
  let state = adapter.initialState(permissionModeOf(input.agent), input.prompt);
  let harnessSessionId: string | null = null;
  let terminal: TurnTerminal | null = null;

  const interrupt = (): void => {
    const line = adapter.interruptLine();
    if (line !== null && child.stdin.writable) child.stdin.write(`${line}\n`);
    else child.kill('SIGINT');
  };
  void options.interruptWhen?.then(interrupt, () => undefined);
  for (const line of plan.stdinLines) child.stdin.write(`${line}\n`);
  if (!plan.keepStdinOpen) child.stdin.end();

  let pending = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk: string) => {
    pending += chunk;
    // Split on LF only: Pi's RPC framing allows U+2028 inside JSON strings.
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
      const line = pending.slice(0, newline).replace(/\r$/, '');
      pending = pending.slice(newline + 1);
      stdoutLines.push(line);
      const step = adapter.parseLine(line, state);
      state = step.state;
      if (step.harnessSessionId) harnessSessionId = step.harnessSessionId;
      outputs.push(...step.outputs);
      for (const reply of step.stdinLines ?? []) child.stdin.write(`${reply}\n`);
      if (step.confirmation) {
        const decision = options.onConfirmation?.(step.confirmation) ?? { result: 'deny' as const, denyMessage: 'no confirmation handler' };
        const answer = adapter.answerConfirmation(step.confirmation, decision);
        if (answer !== null) child.stdin.write(`${answer}\n`);
      }
      if (step.terminal) {
        terminal = step.terminal;
        if (child.stdin.writable) child.stdin.end();
      }
    }
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));

  const timeout = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
  const exitCode = await new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  clearTimeout(timeout);
  return { stdoutLines, stderr, outputs, harnessSessionId, terminal, exitCode };
}
