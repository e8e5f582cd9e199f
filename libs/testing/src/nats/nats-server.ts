import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adoptAnonymousJetStream, connectNats, ensureNatsAuth, issueBerthUser, NatsAuthFiles, readAuthKeys, type ServiceName } from '@berth/nats';
import type { NatsConnection } from '@nats-io/nats-core';
import { Subjects } from '@berth/contracts';

/** A service's user, or `admin`: a test-only user of the services' account allowed everything. */
export type NatsTestUser = ServiceName | 'admin';

export type NatsServerHandle = Readonly<{
  url: string;
  port: number;
  storeDir: string;
  /** The auth material (`nats-init` layout): keys, server config block, creds, issuer.json. */
  authDir: string;
  /** Path of a user's `.creds` file. */
  credsFile(user: NatsTestUser): string;
  /** The gateway's minting material (`BERTH_NATS_ISSUER`). */
  issuerFile: string;
  /** `NATS_URL` and `NATS_CREDS` for a service process. */
  env(service: ServiceName): Readonly<{ NATS_URL: string; NATS_CREDS: string }>;
  /** A connection as `user` (default: admin), named `name`. */
  connect(user?: NatsTestUser, name?: string): Promise<NatsConnection>;
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

/**
 * Starts a JetStream-enabled nats-server on loopback, on a free port, with its own store dir and
 * the same auth production runs: operator mode, every service its own user (creds under `authDir`),
 * no anonymous clients. `jetstreamDir` reuses a store (e.g. one an unauthenticated server wrote).
 */
export async function startNatsServer(options: { startTimeoutMs?: number; jetstreamDir?: string } = {}): Promise<NatsServerHandle> {
  const binary = natsServerBinary();
  const port = await freePort();
  const storeDir = mkdtempSync(join(tmpdir(), 'berth-nats-'));
  const authDir = join(storeDir, 'auth');
  await ensureNatsAuth(authDir, join(storeDir, 'resolver'));
  const keys = readAuthKeys(authDir);
  // A store an unauthenticated server wrote (the previous release) is adopted as `nats-init` does it.
  const jetstreamDir = options.jetstreamDir ?? join(storeDir, 'js');
  adoptAnonymousJetStream(jetstreamDir, keys);
  const adminCreds = join(authDir, NatsAuthFiles.creds('admin'));
  writeFileSync(adminCreds, await issueBerthUser(keys, 'admin', { publish: ['>'], subscribe: ['>'], respond: true }), { mode: 0o600 });
  const configFile = join(storeDir, 'nats.conf');
  writeFileSync(
    configFile,
    [`host: 127.0.0.1`, `port: ${port}`, `jetstream { store_dir: ${JSON.stringify(jetstreamDir)} }`, readFileSync(join(authDir, NatsAuthFiles.serverConfig), 'utf8')].join('\n'),
  );
  const url = `nats://127.0.0.1:${port}`;
  const credsFile = (user: NatsTestUser) => join(authDir, NatsAuthFiles.creds(user));
  const { start, halt } = natsProcess(binary, configFile, port, options.startTimeoutMs ?? 15_000);

  await start();
  return {
    url,
    port,
    storeDir,
    authDir,
    credsFile,
    issuerFile: join(authDir, NatsAuthFiles.issuer),
    env: (service) => ({ NATS_URL: url, NATS_CREDS: credsFile(service) }),
    connect: (user = 'admin', name = `test-${user}`) => connectNats({ url, name, credsFile: credsFile(user), inboxPrefix: Subjects.serviceInbox(user) }),
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

/** One nats-server process on a config file: started (until its client port answers) and halted, again and again. */
export function natsProcess(binary: string, configFile: string, port: number, timeoutMs: number): { start(): Promise<void>; halt(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void> } {
  let child: ChildProcess | null = null;
  return {
    async start() {
      const proc = spawn(binary, ['-c', configFile], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      proc.stderr?.on('data', (chunk: Buffer) => {
        stderr = (stderr + chunk.toString()).slice(-4000);
      });
      running.add(proc);
      proc.once('exit', () => running.delete(proc));
      child = proc;
      await waitForPort(port, timeoutMs, () => (proc.exitCode !== null ? `nats-server exited: ${stderr}` : null));
    },
    async halt(signal = 'SIGTERM') {
      const proc = child;
      child = null;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill(signal);
      const forced = setTimeout(() => proc.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(forced);
    },
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
