import { mkdir, readdir, stat } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { EGRESS_SOCKET_SUBDIR, EgressDirectories, listenForSandbox } from '@berth/docker';
import { EGRESS_SOCKET_FILE } from '@berth/sandbox-domain';
import type { Logger } from '@berth/ports';

const DIR_ID = /^[0-9a-f]{16}$/;

export type SandboxSocketsDeps = Readonly<{
  root: string;
  /** The server for one sandbox directory (the socket it listens on is that sandbox's identity). */
  serverFor: (dirId: string) => Server;
  /** Runs before the egress listens in a sandbox's socket directory (it writes the CA certificate there). */
  beforeListen: (socketDir: string) => Promise<void>;
  /** A directory went away (its sandbox was removed). */
  onGone?: (dirId: string) => void;
  rescanMs: number;
  log: Logger;
}>;

/**
 * Keeps one listening socket in every sandbox's egress directory: `<root>/<id>/socket/egress.sock`.
 * The directory (not the socket file) is what the sandbox has mounted, so a socket made again
 * after the egress restarts appears inside the running sandbox at once. New directories are
 * picked up from a file-system watch on the root, with a periodic rescan as the safety net.
 */
export class SandboxSockets {
  private readonly servers = new Map<string, Server>();
  private watcher: FSWatcher | null = null;
  private timer: NodeJS.Timeout | null = null;
  private scanning: Promise<void> = Promise.resolve();
  private rescanQueued = false;
  private stopped = false;

  constructor(private readonly deps: SandboxSocketsDeps) {}

  async start(): Promise<void> {
    // Refuses a root too long for the socket paths under it, with a message saying so.
    new EgressDirectories(this.deps.root);
    await mkdir(this.deps.root, { recursive: true, mode: 0o755 });
    this.watcher = watch(this.deps.root, () => this.scanSoon());
    this.watcher.on('error', (error) => this.deps.log.warn('cannot watch the egress directory', { dir: this.deps.root, err: error }));
    this.timer = setInterval(() => this.scanSoon(), this.deps.rescanMs);
    this.timer.unref();
    await this.scan();
  }

  /** The sandbox directories served now. */
  served(): string[] {
    return [...this.servers.keys()];
  }

  /** Resolves after a scan that started after this call (tests, and the ready line). */
  async scanned(): Promise<void> {
    await this.scan();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.watcher?.close();
    if (this.timer !== null) clearInterval(this.timer);
    await this.scanning;
    await Promise.all([...this.servers.values()].map((server) => closeServer(server)));
    this.servers.clear();
  }

  private scanSoon(): void {
    if (this.rescanQueued) return;
    this.rescanQueued = true;
    setTimeout(() => {
      this.rescanQueued = false;
      void this.scan();
    }, 20).unref();
  }

  private scan(): Promise<void> {
    this.scanning = this.scanning.then(() => this.scanOnce()).catch((error: unknown) => this.deps.log.warn('cannot scan the egress directory', { dir: this.deps.root, err: error }));
    return this.scanning;
  }

  private async scanOnce(): Promise<void> {
    if (this.stopped) return;
    const ids = new Set((await readdir(this.deps.root)).filter((id) => DIR_ID.test(id)));
    for (const [id, server] of this.servers) {
      if (ids.has(id) && (await socketStillThere(this.socketPath(id)))) continue;
      this.servers.delete(id);
      await closeServer(server);
      if (!ids.has(id)) this.deps.onGone?.(id);
    }
    for (const id of ids) {
      if (this.servers.has(id) || this.stopped) continue;
      const server = await this.listen(id);
      if (server !== null) this.servers.set(id, server);
    }
  }

  private socketPath(id: string): string {
    return join(this.deps.root, id, EGRESS_SOCKET_SUBDIR, EGRESS_SOCKET_FILE);
  }

  private async listen(id: string): Promise<Server | null> {
    const path = this.socketPath(id);
    try {
      const socketDir = join(this.deps.root, id, EGRESS_SOCKET_SUBDIR);
      if (!(await stat(socketDir)).isDirectory()) return null;
      await this.deps.beforeListen(socketDir);
      const server = this.deps.serverFor(id);
      await listenForSandbox(server, path);
      return server;
    } catch (error) {
      // The directory went away meanwhile (its sandbox was removed): the next scan settles it.
      this.deps.log.warn('cannot serve a sandbox socket', { path, err: error });
      return null;
    }
  }
}

/** Someone may have removed the socket file (a second egress on the same root): serve it again. */
async function socketStillThere(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isSocket();
  } catch {
    return false;
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
