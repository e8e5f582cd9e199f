import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

export const REPO_ROOT = join(__dirname, '..', '..');
const SKEWED_CLOCK = join(__dirname, 'skewed-clock.ts');

export type ServiceProcess = Readonly<{
  name: string;
  pid: number;
  output(): string;
  /** True until the process has exited (by itself, at a crash point, or killed). */
  alive(): boolean;
  /** Resolves when the process exits, with its signal or exit code. */
  exited: Promise<string>;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
}>;

/**
 * Spawns `node -r @swc-node/register apps/<name>/src/main.ts` (with the skewed-clock preload, which
 * does nothing unless `BERTH_CHAOS_CLOCK_FILE` is set) and waits until it logs its `ready` line.
 * A process started with `BERTH_CRASH_POINT` may reach that point before it is ready (the kernel's
 * relay republishing, at start, what its SIGKILLed predecessor left unpublished): it dies as armed,
 * by its own SIGKILL, and is returned dead for the scenario to see the fault.
 */
export async function startService(name: string, env: Readonly<Record<string, string>>, readyTimeoutMs = 60_000): Promise<ServiceProcess> {
  const armed = env['BERTH_CRASH_POINT'] !== undefined;
  const child: ChildProcess = spawn(process.execPath, ['-r', '@swc-node/register', '-r', SKEWED_CLOCK, join('apps', name, 'src', 'main.ts')], {
    cwd: REPO_ROOT,
    env: { ...process.env, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-200_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `exit ${code}`)));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const deadline = Date.now() + readyTimeoutMs;
  while (!/\bready\b/.test(output)) {
    if (!alive() && armed && child.signalCode === 'SIGKILL') break;
    if (!alive()) throw new Error(`${name} exited before it was ready (${child.signalCode ?? `exit ${child.exitCode}`}):\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${name} not ready within ${readyTimeoutMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
  return {
    name,
    pid: child.pid ?? -1,
    output: () => output,
    alive,
    exited,
    async kill() {
      if (!alive()) return;
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (!alive()) return;
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(forced);
    },
  };
}
