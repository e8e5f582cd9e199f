import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');

export type ServiceProcess = Readonly<{ output(): string; stop(): Promise<void> }>;

/** Spawns the session-kernel service (`apps/session-kernel/src/main.ts`) and waits for its ready line. */
export async function startKernelService(env: Record<string, string>, readyTimeoutMs = 30_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', join('apps', 'session-kernel', 'src', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', BERTH_OUTBOX_RELAY_MS: '200', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`session-kernel not ready within ${readyTimeoutMs} ms:\n${output}`)), readyTimeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('ready: consuming')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`session-kernel exited before it was ready:\n${output}`));
    });
  });
  return {
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(forced);
    },
  };
}
