import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');
const MAIN = join('apps', 'session-kernel', 'src', 'main.ts');

export type KernelProcess = Readonly<{
  pid: number;
  /** Resolves with the signal or exit code when the process ends. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  stop(): Promise<void>;
}>;

/** Spawns `node -r @swc-node/register apps/session-kernel/src/main.ts` and waits for its ready line. */
export async function startKernelProcess(
  env: Record<string, string>,
  options: { readyTimeoutMs?: number; nodeArgs?: readonly string[] } = {},
): Promise<KernelProcess> {
  const readyTimeoutMs = options.readyTimeoutMs ?? 30_000;
  const child: ChildProcess = spawn(process.execPath, [...(options.nodeArgs ?? []), '-r', '@swc-node/register', MAIN], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', BERTH_OUTBOX_RELAY_MS: '200', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kernel not ready within ${readyTimeoutMs} ms:\n${output}`)), readyTimeoutMs);
    const onData = (): void => {
      if (output.includes('ready: consuming')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`kernel exited before it was ready:\n${output}`));
    });
  });
  const handle: KernelProcess = {
    pid: child.pid ?? -1,
    exited,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(forced);
    },
  };
  try {
    await ready;
  } catch (e) {
    await handle.stop();
    throw e;
  }
  return handle;
}
