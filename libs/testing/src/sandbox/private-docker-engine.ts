import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import Docker from 'dockerode';
import { releaseWorkspaceMounts } from './workspace-mounts';

/** A dockerd this test started for itself: its own socket, data root, exec root and pidfile. */
export type PrivateDockerEngine = Readonly<{
  name: string;
  dockerHost: string;
  docker: Docker;
  /** SIGSTOP: the engine stops answering (a host gone from the network); its containers keep running. */
  freeze(): void;
  /** SIGCONT after `freeze`. */
  thaw(): void;
  /** Copies an image from another engine (`docker save | docker load`: the image id is kept). */
  loadImage(image: string, from: Docker): Promise<void>;
  /** Removes every container, stops the engine (SIGTERM, waits for it to exit) and deletes its directories. */
  stop(): Promise<void>;
}>;

const PING_TIMEOUT_MS = 60_000;

function pings(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath, path: '/_ping', timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

function exited(child: ChildProcess): Promise<void> {
  return child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => child.once('exit', () => resolve()));
}

/**
 * Starts a dockerd of the test's own, like scripts/docker/ensure-engine.sh starts Berth's
 * (`--bridge=none`, no iptables), under a fresh directory in /tmp (short enough for socket paths).
 * It never touches the shared engine. Needs root and dockerd on PATH (ensureDockerTestEngine
 * installs it). The caller stops it in its teardown.
 */
export async function startPrivateDockerEngine(name: string): Promise<PrivateDockerEngine> {
  const dir = mkdtempSync(`/tmp/bde-${name}-`);
  const socketPath = join(dir, 'docker.sock');
  const child = spawn(
    'dockerd',
    ['--bridge=none', '--iptables=false', '--ip6tables=false', '--data-root', join(dir, 'data'), '--exec-root', join(dir, 'exec'), '--pidfile', join(dir, 'docker.pid'), '--host', `unix://${socketPath}`],
    { stdio: ['ignore', 'ignore', 'pipe'], detached: true },
  );
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-8192)));
  const deadline = Date.now() + PING_TIMEOUT_MS;
  while (!(await pings(socketPath))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`dockerd ${name} did not answer on ${socketPath}:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const docker = new Docker({ socketPath });
  let frozen = false;
  return {
    name,
    dockerHost: `unix://${socketPath}`,
    docker,
    freeze() {
      frozen = true;
      child.kill('SIGSTOP');
    },
    thaw() {
      frozen = false;
      child.kill('SIGCONT');
    },
    async loadImage(image, from) {
      const archive = await from.getImage(image).get();
      const loaded = await docker.loadImage(archive);
      await new Promise<void>((resolve, reject) => docker.modem.followProgress(loaded, (error) => (error ? reject(error) : resolve())));
    },
    async stop() {
      if (frozen) child.kill('SIGCONT');
      const containers = await docker.listContainers({ all: true }).catch(() => []);
      await Promise.all(containers.map((c) => docker.getContainer(c.Id).remove({ force: true, v: true }).catch(() => undefined)));
      child.kill('SIGTERM');
      await exited(child);
      releaseWorkspaceMounts(dir);
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    },
  };
}
