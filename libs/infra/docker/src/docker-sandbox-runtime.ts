import { posix } from 'node:path';
import { ValidationError } from '@berth/core';
import type { Readable } from 'node:stream';
import type { ExecHandle, ExecSpec, SandboxInfo, SandboxPathStat, SandboxRuntime, SandboxRuntimeEvent, SandboxSpec } from '@berth/ports';
import Docker from 'dockerode';
import { engineError, imageMissing, isConflict, isNotFound, isNotModified } from './docker-errors';
import { startExec } from './docker-exec';
import { watchEvents } from './docker-events';
import { EGRESS_DIR_LABEL, EGRESS_PORT_LABEL, EgressDirectories } from './egress-directories';
import { freeLoopbackPort } from './free-port';
import { containerCreateOptions, withEgressMount } from './host-config';
import { firstFile, packFile } from './tar';

export type DockerSandboxRuntimeOptions = Readonly<{
  /** Engine address; defaults to `$DOCKER_HOST`, else Berth's own socket. */
  dockerHost?: string;
  /** Only containers with these labels are listed in events (Berth's managed marker by default). */
  managedLabels?: Readonly<Record<string, string>>;
  /** Owner given to files written with writeFile (the sandbox user). */
  fileOwner?: Readonly<{ uid: number; gid: number }>;
  /**
   * Host directory holding one egress directory per sandbox (see `EgressDirectories`); the egress
   * proxy serves the same directory. Without it, a spec that asks for an egress is refused.
   */
  egressRoot?: string;
}>;

export const DEFAULT_DOCKER_HOST = 'unix:///run/berth-docker.sock';
// Mirrors SandboxLabels.managed in @berth/sandbox-domain (infra may not import domain code).
const DEFAULT_MANAGED_LABELS = { 'berth.managed': 'true' } as const;

export function dockerFromHost(host: string = process.env['DOCKER_HOST'] ?? DEFAULT_DOCKER_HOST): Docker {
  if (host.startsWith('unix://')) return new Docker({ socketPath: host.slice('unix://'.length) });
  const url = new URL(host.replace(/^tcp:/, 'http:'));
  return new Docker({ host: url.hostname, port: Number(url.port || 2375), protocol: 'http' });
}

const bareName = (name: string): string => (name.startsWith('/') ? name.slice(1) : name);

function infoFromInspect(info: Docker.ContainerInspectInfo): SandboxInfo {
  const running = info.State.Running === true;
  const started = info.State.StartedAt;
  const relayPort = Number(info.Config.Labels?.[EGRESS_PORT_LABEL] ?? NaN);
  return {
    egressRelayPort: Number.isInteger(relayPort) ? relayPort : null,
    id: info.Id,
    name: bareName(info.Name),
    labels: { ...(info.Config.Labels ?? {}) },
    running,
    exitCode: running ? null : (info.State.ExitCode ?? null),
    oomKilled: info.State.OOMKilled === true,
    startedAt: started && !started.startsWith('0001-') ? started : null,
  };
}

/** Docker's `X-Docker-Container-Path-Stat`: Go's os.FileMode bits (dir 1<<31, symlink 1<<27). */
type DockerPathStat = { name: string; size: number; mode: number; mtime: string; linkTarget: string };

function pathStatOf(stat: DockerPathStat): SandboxPathStat {
  const mode = stat.mode >>> 0;
  const kind = mode & 0x80000000 ? 'directory' : mode & 0x08000000 ? 'link' : (mode & 0x8f000000) === 0 ? 'file' : 'other';
  return { kind, size: stat.size, mtime: stat.mtime };
}

/**
 * `SandboxRuntime` on a Docker engine through dockerode. Every operation is idempotent: a
 * create that finds the name taken starts the existing container, stop/remove of a missing or
 * already-stopped container succeed. Containers are always created hardened (see host-config).
 */
export class DockerSandboxRuntime implements SandboxRuntime {
  readonly docker: Docker;
  private readonly managedLabels: Readonly<Record<string, string>>;
  private readonly fileOwner: Readonly<{ uid: number; gid: number }>;
  private readonly egress: EgressDirectories | null;

  constructor(options: DockerSandboxRuntimeOptions & { docker?: Docker } = {}) {
    this.docker = options.docker ?? dockerFromHost(options.dockerHost);
    this.managedLabels = options.managedLabels ?? DEFAULT_MANAGED_LABELS;
    this.fileOwner = options.fileOwner ?? { uid: 1000, gid: 1000 };
    this.egress = options.egressRoot === undefined ? null : new EgressDirectories(options.egressRoot);
  }

  async ensureRunning(spec: SandboxSpec): Promise<SandboxInfo> {
    return this.startContainer(await this.createContainer(spec), spec.name);
  }

  async create(spec: SandboxSpec): Promise<void> {
    await this.createContainer(spec);
  }

  async start(nameOrId: string): Promise<SandboxInfo> {
    return this.startContainer(this.docker.getContainer(nameOrId), nameOrId);
  }

  private async createContainer(spec: SandboxSpec): Promise<Docker.Container> {
    let options = containerCreateOptions(spec, this.egress?.root ?? null);
    let egressId: string | null = null;
    if (spec.egress !== undefined) {
      if (this.egress === null) throw new ValidationError('this runtime has no egress directory (egressRoot): a sandbox with an egress cannot be created', 'egress');
      egressId = await this.egress.prepare(spec.name);
      const relayPort = spec.egress.relayPort ?? (await freeLoopbackPort());
      options = withEgressMount(options, { id: egressId, socketDir: this.egress.socketDir(egressId), mountAt: spec.egress.mountAt, relayPort });
    }
    try {
      return await this.docker.createContainer(options);
    } catch (error) {
      if (isNotFound(error)) throw imageMissing(spec.image, error);
      if (!isConflict(error)) throw engineError('create', spec.name, error);
      // The name is taken by a container with its own egress directory (a claimed warm one): drop ours.
      const existing = await this.labelsOf(spec.name);
      if (egressId !== null && existing !== null && existing[EGRESS_DIR_LABEL] !== egressId) await this.egress?.remove(egressId);
      return this.docker.getContainer(spec.name);
    }
  }

  private async startContainer(container: Docker.Container, name: string): Promise<SandboxInfo> {
    try {
      await container.start();
    } catch (error) {
      if (!isNotModified(error)) throw engineError('start', name, error);
    }
    const info = await this.inspect(container.id);
    if (info === null) throw engineError('inspect', name, new Error('container vanished right after start'));
    return info;
  }

  async inspect(nameOrId: string): Promise<SandboxInfo | null> {
    try {
      return infoFromInspect(await this.docker.getContainer(nameOrId).inspect());
    } catch (error) {
      if (isNotFound(error)) return null;
      throw engineError('inspect', nameOrId, error);
    }
  }

  async stop(nameOrId: string, timeoutSeconds = 5): Promise<void> {
    try {
      await this.docker.getContainer(nameOrId).stop({ t: timeoutSeconds });
    } catch (error) {
      if (isNotFound(error) || isNotModified(error)) return;
      throw engineError('stop', nameOrId, error);
    }
  }

  async remove(nameOrId: string): Promise<void> {
    const egressId = this.egress === null ? undefined : (await this.labelsOf(nameOrId))?.[EGRESS_DIR_LABEL];
    try {
      // v: anonymous volumes (the read-only-root workspace) go with the container.
      await this.docker.getContainer(nameOrId).remove({ force: true, v: true });
    } catch (error) {
      // 409 here means "removal already in progress": someone else is doing our job.
      if (isNotFound(error) || isConflict(error)) return;
      throw engineError('remove', nameOrId, error);
    }
    if (egressId !== undefined) await this.egress?.remove(egressId);
  }

  /** Removes egress directories whose container is gone (after a crash, or containers removed by hand). */
  async pruneEgressDirectories(olderThanMs = 0): Promise<number> {
    if (this.egress === null) return 0;
    // Every container with an egress directory counts, not only managed ones: an image build's is live too.
    let summaries: Docker.ContainerInfo[];
    try {
      summaries = await this.docker.listContainers({ all: true, filters: { label: [EGRESS_DIR_LABEL] } });
    } catch (error) {
      throw engineError('list', EGRESS_DIR_LABEL, error);
    }
    const live = new Set(summaries.map((c) => c.Labels[EGRESS_DIR_LABEL]).filter((id): id is string => id !== undefined));
    return this.egress.prune(live, olderThanMs);
  }

  /** The host path of a container's egress socket (what the egress serves it on), or null when it has none. */
  async egressSocketPath(nameOrId: string): Promise<string | null> {
    const id = this.egress === null ? undefined : (await this.labelsOf(nameOrId))?.[EGRESS_DIR_LABEL];
    return id === undefined || this.egress === null ? null : this.egress.socketPath(id);
  }

  private async labelsOf(nameOrId: string): Promise<Readonly<Record<string, string>> | null> {
    return (await this.inspect(nameOrId))?.labels ?? null;
  }

  async list(labels: Readonly<Record<string, string>>): Promise<readonly SandboxInfo[]> {
    let summaries: Docker.ContainerInfo[];
    try {
      summaries = await this.docker.listContainers({
        all: true,
        filters: { label: Object.entries(labels).map(([k, v]) => `${k}=${v}`) },
      });
    } catch (error) {
      throw engineError('list', JSON.stringify(labels), error);
    }
    const infos = await Promise.all(summaries.map((s) => this.inspect(s.Id)));
    return infos.filter((i): i is SandboxInfo => i !== null);
  }

  async exec(nameOrId: string, spec: ExecSpec): Promise<ExecHandle> {
    if (spec.cmd.length === 0) throw new ValidationError('cmd must not be empty', 'cmd');
    try {
      return await startExec(this.docker, this.docker.getContainer(nameOrId), spec);
    } catch (error) {
      throw engineError('exec', nameOrId, error);
    }
  }

  /**
   * Renames (Docker labels are immutable after create, so a claimed pool container keeps its pool
   * labels and its new name says whose it is). Fails with a conflict if `newName` is taken.
   */
  async relabel(nameOrId: string, newName: string): Promise<void> {
    // Labels never change, so the egress directory is looked up beside the rename, not after it.
    const [renamed, labels] = await Promise.allSettled([this.docker.getContainer(nameOrId).rename({ name: newName }), this.egress === null ? null : this.labelsOf(nameOrId)]);
    if (renamed.status === 'rejected') throw engineError('rename', nameOrId, renamed.reason);
    // The egress reads who a sandbox is from its directory: it now serves the session named here.
    const egressId = labels.status === 'fulfilled' ? labels.value?.[EGRESS_DIR_LABEL] : (await this.labelsOf(newName))?.[EGRESS_DIR_LABEL];
    if (egressId !== undefined) await this.egress?.rename(egressId, newName);
  }

  async readFile(nameOrId: string, path: string): Promise<Buffer | null> {
    if (!posix.isAbsolute(path)) throw new ValidationError('path must be absolute', 'path');
    let archive: NodeJS.ReadableStream;
    try {
      archive = await this.docker.getContainer(nameOrId).getArchive({ path });
    } catch (error) {
      if (isNotFound(error)) return null;
      throw engineError('getArchive', `${nameOrId}:${path}`, error);
    }
    const chunks: Buffer[] = [];
    for await (const chunk of archive) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    return firstFile(Buffer.concat(chunks));
  }

  async writeFile(nameOrId: string, path: string, data: Buffer | string, mode = 0o644): Promise<void> {
    if (!posix.isAbsolute(path) || path.endsWith('/')) throw new ValidationError('path must be an absolute file path', 'path');
    const tar = packFile({
      name: posix.basename(path),
      data: Buffer.isBuffer(data) ? data : Buffer.from(data),
      mode,
      uid: this.fileOwner.uid,
      gid: this.fileOwner.gid,
      mtime: new Date(),
    });
    try {
      await this.docker.getContainer(nameOrId).putArchive(tar, { path: posix.dirname(path) });
    } catch (error) {
      throw engineError('putArchive', `${nameOrId}:${path}`, error);
    }
  }

  async putArchive(nameOrId: string, dir: string, archive: Readable): Promise<void> {
    if (!posix.isAbsolute(dir)) throw new ValidationError('dir must be absolute', 'dir');
    try {
      await this.docker.getContainer(nameOrId).putArchive(archive, { path: dir });
    } catch (error) {
      throw engineError('putArchive', `${nameOrId}:${dir}`, error);
    }
  }

  async getArchive(nameOrId: string, path: string): Promise<Readable | null> {
    if (!posix.isAbsolute(path)) throw new ValidationError('path must be absolute', 'path');
    try {
      return (await this.docker.getContainer(nameOrId).getArchive({ path })) as Readable;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw engineError('getArchive', `${nameOrId}:${path}`, error);
    }
  }

  async stat(nameOrId: string, path: string): Promise<SandboxPathStat | null> {
    if (!posix.isAbsolute(path)) throw new ValidationError('path must be absolute', 'path');
    let response: { headers?: Record<string, string | string[] | undefined>; resume?: () => void };
    try {
      response = (await this.docker.getContainer(nameOrId).infoArchive({ path })) as typeof response;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw engineError('stat', `${nameOrId}:${path}`, error);
    }
    response.resume?.();
    const header = response.headers?.['x-docker-container-path-stat'];
    if (typeof header !== 'string') throw engineError('stat', `${nameOrId}:${path}`, new Error('no path stat in the answer'));
    return pathStatOf(JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as DockerPathStat);
  }

  async appendFile(nameOrId: string, path: string, data: string): Promise<void> {
    if (!posix.isAbsolute(path) || path.endsWith('/')) throw new ValidationError('path must be an absolute file path', 'path');
    // The data goes through stdin, never the command line: an answer can be larger than one argument may be.
    const handle = await this.exec(nameOrId, { cmd: ['sh', '-c', 'cat >> "$1"', 'berth-append', path], stdin: data });
    for await (const _line of handle.lines) continue;
    const code = await handle.exit;
    if (code !== 0) throw engineError('append', `${nameOrId}:${path}`, new Error(`exit code ${code}: ${handle.stderrTail?.() ?? ''}`));
  }

  events(signal: AbortSignal): AsyncIterable<SandboxRuntimeEvent> {
    return watchEvents(
      this.docker,
      Object.entries(this.managedLabels).map(([k, v]) => `${k}=${v}`),
      signal,
    );
  }
}
