import { ValidationError } from '@berth/core';
import type { SandboxMount, SandboxSpec } from '@berth/ports';
import type Docker from 'dockerode';
import { EGRESS_DIR_LABEL, EGRESS_PORT_LABEL } from './egress-directories';

/** Writable places a read-only-root sandbox still needs. Volumes (not tmpfs) where files are copied in: the engine's archive API cannot see a tmpfs. */
const WRITABLE_VOLUMES_WHEN_READ_ONLY = ['/workspace', '/home/agent'];
const TMPFS_WHEN_READ_ONLY: Record<string, string> = { '/tmp': 'rw,nosuid,nodev,size=256m' };

// Host paths whose bind would hand the sandbox the engine (the Docker socket or a directory holding it).
const FORBIDDEN_BIND_SOURCES = ['/', '/run', '/var', '/var/run', '/var/lib/docker', '/var/lib/berth-docker'];

const isRootUser = (user: string): boolean => {
  const name = user.split(':')[0]?.trim() ?? '';
  return name === '' || name === 'root' || /^0+$/.test(name);
};

function refuseEngineAccess(mount: SandboxMount, index: number, egressRoot: string | null): void {
  if (mount.type !== 'bind') return;
  const source = (mount.source ?? '').replace(/\/+$/, '') || '/';
  const field = `mounts[${index}].source`;
  if (egressRoot !== null && (source === egressRoot || source.startsWith(`${egressRoot}/`))) {
    throw new ValidationError(`refusing to bind ${source} into a sandbox: egress directories are mounted by the runtime only, each into its own sandbox`, field);
  }
  if (FORBIDDEN_BIND_SOURCES.includes(source) || source.endsWith('.sock') || source.includes('docker.sock')) {
    throw new ValidationError(`refusing to bind ${source} into a sandbox: it would expose the container engine`, field);
  }
  if (FORBIDDEN_BIND_SOURCES.slice(4).some((dir) => source.startsWith(dir + '/'))) {
    throw new ValidationError(`refusing to bind ${source} into a sandbox: it is the engine's data`, field);
  }
}

/**
 * Rejects specs that would weaken the sandbox: root user, engine socket binds (any `*.sock`),
 * binds into the egress root, nonsense limits. The one socket a sandbox gets, its egress socket,
 * is added by the runtime after this check (`withEgressMount`), never taken from a spec.
 */
export function assertHardenedSpec(spec: SandboxSpec, egressRoot: string | null = null): void {
  if (isRootUser(spec.user)) throw new ValidationError('sandboxes never run as root', 'user');
  if (!(spec.memoryBytes > 0)) throw new ValidationError('memoryBytes must be positive', 'memoryBytes');
  if (!(spec.nanoCpus > 0)) throw new ValidationError('nanoCpus must be positive', 'nanoCpus');
  if (!(spec.pidsLimit > 0)) throw new ValidationError('pidsLimit must be positive', 'pidsLimit');
  if (spec.network.startsWith('container:')) throw new ValidationError('sharing another container\'s network is not allowed', 'network');
  (spec.mounts ?? []).forEach((mount, index) => refuseEngineAccess(mount, index, egressRoot));
}

export type EgressMount = Readonly<{ id: string; socketDir: string; mountAt: string; relayPort: number }>;

/**
 * Adds the sandbox's own egress directory (read-only: the sandbox can connect to the socket in it
 * but create nothing there), the labels that find it again and the relay's port.
 */
export function withEgressMount(options: Docker.ContainerCreateOptions, egress: EgressMount): Docker.ContainerCreateOptions {
  return {
    ...options,
    Env: [...(options.Env ?? []), `BERTH_EGRESS_RELAY_PORT=${egress.relayPort}`],
    Labels: { ...options.Labels, [EGRESS_DIR_LABEL]: egress.id, [EGRESS_PORT_LABEL]: String(egress.relayPort) },
    HostConfig: { ...options.HostConfig, Mounts: [...(options.HostConfig?.Mounts ?? []), { Type: 'bind', Source: egress.socketDir, Target: egress.mountAt, ReadOnly: true }] },
  };
}

/** The full create request for a sandbox: always hardened, whatever the spec asks. */
export function containerCreateOptions(spec: SandboxSpec, egressRoot: string | null = null): Docker.ContainerCreateOptions {
  assertHardenedSpec(spec, egressRoot);
  const mounts: Docker.MountSettings[] = (spec.mounts ?? []).map((m) => ({
    Type: m.type,
    Source: m.source ?? '',
    Target: m.target,
    ReadOnly: m.readOnly ?? false,
  }));
  if (spec.readOnlyRoot) {
    for (const target of WRITABLE_VOLUMES_WHEN_READ_ONLY) {
      if (!mounts.some((m) => m.Target === target)) mounts.push({ Type: 'volume', Source: '', Target: target, ReadOnly: false });
    }
  }
  return {
    name: spec.name,
    Image: spec.image,
    Cmd: [...spec.cmd],
    Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
    Labels: { ...spec.labels },
    User: spec.user,
    WorkingDir: spec.workdir,
    Tty: false,
    OpenStdin: false,
    HostConfig: {
      NetworkMode: spec.network,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Privileged: false,
      PidsLimit: spec.pidsLimit,
      Memory: spec.memoryBytes,
      // Same as Memory: no swap beyond the memory limit.
      MemorySwap: spec.memoryBytes,
      NanoCpus: spec.nanoCpus,
      ReadonlyRootfs: spec.readOnlyRoot,
      Tmpfs: spec.readOnlyRoot ? { ...TMPFS_WHEN_READ_ONLY } : {},
      Mounts: mounts,
      RestartPolicy: { Name: 'no' },
      AutoRemove: false,
      LogConfig: { Type: 'json-file', Config: { 'max-size': '10m', 'max-file': '2' } },
    },
  };
}
