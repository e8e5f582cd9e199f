import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type NatsServerHandle = Readonly<{
  url: string;
  port: number;
  storeDir: string;
  /** Stops the server and removes its store directory. Safe to call twice. */
  stop(): Promise<void>;
  /** Stops and starts again on the same port and store dir (a broker restart). */
  restart(): Promise<void>;
  /** Stops without removing the store (to simulate an outage; `restart()` brings it back). */
  kill(): Promise<void>;
  /** SIGKILLs the server, as a crash would (no clean shutdown of its store); `restart()` brings it back. */
  crash(): Promise<void>;
}>;

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Finds `nats-server` on PATH, installing Debian's package when it is missing. */
export function natsServerBinary(): string {
  const found = which('nats-server');
  if (found) return found;
  process.stderr.write('nats-server not found: installing Debian package nats-server\n');
  execFileSync('sh', ['-c', 'apt-get update -qq && apt-get install -y -qq nats-server'], { stdio: 'ignore' });
  const installed = which('nats-server');
  if (!installed) throw new Error('nats-server is not on PATH and apt-get could not install it');
  return installed;
}

function which(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(':').concat(['/usr/sbin', '/usr/local/sbin'])) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not in this directory
    }
  }
  return null;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts a JetStream-enabled nats-server on loopback, on a free port, with its own store dir. */
export async function startNatsServer(options: { startTimeoutMs?: number } = {}): Promise<NatsServerHandle> {
  const binary = natsServerBinary();
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'berth-nats-'));
  const timeoutMs = options.startTimeoutMs ?? 15_000;
  let child: ChildProcess | null = null;

  const start = async (): Promise<void> => {
    const proc = spawn(binary, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    proc.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    running.add(proc);
    proc.once('exit', () => running.delete(proc));
    child = proc;
    await waitForPort(port, timeoutMs, () => (proc.exitCode !== null ? `nats-server exited: ${stderr}` : null));
  };

  const halt = async (signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> => {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill(signal);
    const forced = setTimeout(() => proc.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(forced);
  };

  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    async stop() {
      await halt();
      rmSync(storeDir, { recursive: true, force: true });
    },
    async restart() {
      await halt();
      await start();
    },
    kill: () => halt(),
    crash: () => halt('SIGKILL'),
  };
}

/** Polls until something accepts TCP connections on the port (no fixed sleeps). */
async function waitForPort(port: number, timeoutMs: number, failed: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const failure = failed();
    if (failure) throw new Error(failure);
    if (await accepts(port)) return;
    if (Date.now() > deadline) throw new Error(`nats-server did not accept connections on port ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
