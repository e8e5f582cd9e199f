import { spawn } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');

export type ServiceProcess = Readonly<{
  name: string;
  output(): string;
  /** True once the process has exited (e.g. at a crash point). */
  ended(): boolean;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  stop(): Promise<void>;
}>;

/** Spawns `node -r @swc-node/register apps/<name>/src/main.ts` and waits until it logs `ready`. */
export async function startService(name: string, env: Record<string, string>, readyTimeoutMs = 60_000): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', join('apps', name, 'src', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ended = () => child.exitCode !== null || child.signalCode !== null;
  const deadline = Date.now() + readyTimeoutMs;
  while (!/ready/.test(output)) {
    if (ended()) throw new Error(`${name} exited before it was ready:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} not ready within ${readyTimeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    name,
    output: () => output,
    ended,
    async kill() {
      if (ended()) return;
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (ended()) return;
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(forced);
    },
  };
}
