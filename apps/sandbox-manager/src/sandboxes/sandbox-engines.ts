import { resolve } from 'node:path';
import { detectWorkspaceKind, DockerSandboxImages, EGRESS_DIR_LABEL, EgressDirectories, DockerSandboxRuntime, LoopWorkspaceSnapshots, LoopWorkspaces, VolumeWorkspaces } from '@berth/docker';
import { ValidationError } from '@berth/core';
import type { Logger, SandboxImages, SandboxRuntime, SessionWorkspaces, WorkspaceSnapshots } from '@berth/ports';
import { openKubernetesSandboxes } from '@berth/kubernetes';
import { type LeaseLock, MultiHostRuntime, MultiHostSandboxImages } from '@berth/sandbox-lifecycle';
import type { ManagerConfig } from '../config/manager.config';
import { NO_WORKSPACE_SNAPSHOTS } from '../turns/turn-checkpoints';

/** `snapshots`: the per-turn workspace snapshots forks start from (`loop` workspaces only). */
export type SandboxEngines = Readonly<{
  runtime: SandboxRuntime;
  workspaces: SessionWorkspaces;
  snapshots: WorkspaceSnapshots;
  images: SandboxImages;
  /**
   * The host path of a sandbox's egress socket, under the egress directory of whichever host runs
   * it (null: none has it). Its directory is what the sandbox sees at /run/berth: custom tools
   * sockets go beside it.
   */
  egressSocketOf(sandboxId: string): Promise<string | null>;
  /** False when sandboxes have no egress socket on this machine (Kubernetes): custom tools are refused. */
  egressSockets: boolean;
  close(): void;
}>;

/** Kubernetes: environment images are not built (no registry the cluster pulls from is Berth's): refused with what to do instead. */
const NO_IMAGE_BUILDS: SandboxImages = {
  ensure: () =>
    Promise.reject(
      new ValidationError(
        'environment packages are installed into an image built on the Docker engine; the Kubernetes runtime builds none: put the packages in BERTH_SANDBOX_IMAGE (an image the cluster can pull), and leave config.packages empty',
        'config.packages',
      ),
    ),
  builds: async () => [],
  removeBuild: async () => undefined,
};

/**
 * The engines the manager runs sandboxes on: the one of DOCKER_HOST, or the hosts of
 * BERTH_SANDBOX_HOSTS behind one `MultiHostRuntime`. Each host's egress directories are pruned
 * before anything here creates sandboxes; one changed in the last minute is kept, since another
 * sandbox-manager may have made it for a container it is creating. Several hosts need `loop` workspaces: a session's workspace then lives on this
 * machine and follows it to any host; a Docker volume lives on one engine and would not. `lock`,
 * the store's lease lock, serialises placements on several hosts and the builds of one image tag.
 */
export async function openSandboxEngines(config: ManagerConfig, scopeLabels: Readonly<Record<string, string>>, log: Logger, lock: LeaseLock): Promise<SandboxEngines> {
  const managedLabels = { 'berth.managed': 'true', ...scopeLabels };
  if (config.kubernetes !== null) {
    const cluster = await openKubernetesSandboxes({ ...config.kubernetes, managedLabels, scopeLabels });
    log.info('sandboxes: Kubernetes (agents.x-k8s.io Sandboxes)', { server: cluster.server, namespace: config.kubernetes.namespace, egress: `${cluster.egress.host}:${cluster.egress.port}`, workspaces: 'claim' });
    log.warn('Kubernetes sandboxes: no per-turn workspace snapshots (sessions cannot be forked), no environment packages, no custom tools, no repository resources yet; each is refused where it is asked for');
    // No egress socket on this machine: a repository clone (which goes out through the sandbox's egress) is refused with a message.
    return { runtime: cluster.runtime, workspaces: cluster.workspaces, snapshots: NO_WORKSPACE_SNAPSHOTS, images: NO_IMAGE_BUILDS, egressSocketOf: async () => null, egressSockets: false, close: () => undefined };
  }
  const hosts = config.sandboxHosts.length > 0 ? config.sandboxHosts : [{ name: 'default', dockerHost: config.dockerHost, egressDir: config.egressDir, maxSandboxes: null }];
  const engines = hosts.map((h) => ({ ...h, runtime: new DockerSandboxRuntime({ dockerHost: h.dockerHost, managedLabels, egressRoot: h.egressDir }) }));
  for (const engine of engines) {
    const pruned = await engine.runtime.pruneEgressDirectories(60_000);
    if (pruned > 0) log.info('start: removed the egress directories of containers that are gone', { removed: pruned, host: engine.name });
  }
  const detected = await Promise.all(
    engines.map(async (e) => (config.workspaceStorage === 'auto' ? await detectWorkspaceKind(e.runtime.docker) : { kind: config.workspaceStorage, reason: 'BERTH_WORKSPACE_STORAGE' })),
  );
  const first = engines[0] as (typeof engines)[number];
  const images = (e: (typeof engines)[number]) => new DockerSandboxImages(e.runtime.docker, { ...config.imageBuild, egressRoot: e.egressDir, scopeLabels, lock });
  if (engines.length === 1) {
    const kind = detected[0] as { kind: 'loop' | 'volume'; reason: string };
    const egressSocketOf = (id: string) => first.runtime.egressSocketPath(id);
    if (kind.kind === 'volume') {
      log.warn('workspaces: volume; Docker volumes have no size limit, so resources.workspace_mb is a soft limit (measured before each turn, a turn that finds the workspace over it is refused), and no per-turn snapshots are taken, so sessions cannot be forked', { reason: kind.reason });
      return { runtime: first.runtime, workspaces: new VolumeWorkspaces(first.runtime.docker, scopeLabels), snapshots: NO_WORKSPACE_SNAPSHOTS, images: images(first), egressSocketOf, egressSockets: true, close: () => undefined };
    }
    log.info('workspaces: loop', { reason: kind.reason, dir: resolve(config.workspaceDir) });
    const loop = new LoopWorkspaces(resolve(config.workspaceDir));
    return { runtime: first.runtime, workspaces: loop, snapshots: new LoopWorkspaceSnapshots(resolve(config.workspaceDir), loop), images: images(first), egressSocketOf, egressSockets: true, close: () => undefined };
  }
  const volume = engines.findIndex((_, i) => detected[i]?.kind !== 'loop');
  if (volume >= 0) {
    throw new Error(
      `BERTH_SANDBOX_HOSTS: several sandbox hosts need loop workspaces (a session's workspace must follow it to another host), but host ${engines[volume]?.name} gets volume ones: ${detected[volume]?.reason}`,
    );
  }
  const egressDirs = new Map(engines.map((e) => [e.name, new EgressDirectories(e.egressDir)]));
  const runtime = new MultiHostRuntime({
    hosts: engines.map((e) => ({ name: e.name, runtime: e.runtime, maxSandboxes: e.maxSandboxes ?? Number.MAX_SAFE_INTEGER, ping: () => e.runtime.docker.ping() })),
    countedLabels: managedLabels,
    placementLock: lock,
    probeMs: config.hostProbeMs,
    onHostChange: ({ host, reachable, sandboxes }) =>
      reachable
        ? log.info(`sandbox host ${host} answers again: it takes sandboxes again; removing the ${sandboxes} sandbox(es) reported lost on it`, { host })
        : log.warn(`sandbox host ${host} does not answer: its ${sandboxes} sandbox(es) are reported lost, new sandboxes go to the other hosts`, { host }),
    onError: (error, context) => log.warn(context, { err: error }),
  });
  log.info('sandbox hosts', { hosts: engines.map((e) => ({ name: e.name, docker: e.dockerHost, egress_dir: e.egressDir, max_sandboxes: e.maxSandboxes })) });
  log.info('workspaces: loop', { reason: detected[0]?.reason, dir: resolve(config.workspaceDir) });
  const loop = new LoopWorkspaces(resolve(config.workspaceDir));
  return {
    runtime,
    workspaces: loop,
    snapshots: new LoopWorkspaceSnapshots(resolve(config.workspaceDir), loop),
    images: new MultiHostSandboxImages(engines.map((e) => ({ name: e.name, images: images(e) }))),
    // In the sandbox's own host's egress directory, found with one call through the runtime, which
    // asks only hosts that answer (a host lost meanwhile answers null at once, never hangs the turn).
    egressSocketOf: async (id) => {
      const info = await runtime.inspect(id);
      const dirId = info?.labels[EGRESS_DIR_LABEL];
      const dirs = info?.host === undefined ? undefined : egressDirs.get(info.host);
      return dirId === undefined || dirs === undefined ? null : dirs.socketPath(dirId);
    },
    egressSockets: true,
    close: () => runtime.close(),
  };
}
