import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');

export type ServiceProcess = Readonly<{ output(): string; stop(): Promise<void>; kill(): Promise<void> }>;

/** Spawns `apps/<app>/src/main.ts` as the service runs in production and waits until its output holds `ready`. */
export async function startServiceProcess(app: string, env: Record<string, string>, ready: RegExp, readyTimeoutMs = 30_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', join('apps', app, 'src', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${app} not ready within ${readyTimeoutMs} ms:\n${output}`)), readyTimeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`${app} exited before it was ready:\n${output}`));
    });
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    output: () => output,
    async stop() {
      if (!running()) return;
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(forced);
    },
    async kill() {
      if (!running()) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** The session-kernel service, its outbox relay quickened. */
export const startKernelService = (env: Record<string, string>, readyTimeoutMs = 30_000): Promise<ServiceProcess> =>
  startServiceProcess('session-kernel', { BERTH_OUTBOX_RELAY_MS: '200', ...env }, /ready: consuming/, readyTimeoutMs);
