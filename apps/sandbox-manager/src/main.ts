import 'reflect-metadata';
import { resolve } from 'node:path';
import { Consumers } from '@berth/contracts';
import { systemClock } from '@berth/core';
import { detectWorkspaceKind, DockerSandboxImages, DockerSandboxRuntime, LoopWorkspaceSnapshots, LoopWorkspaces, VolumeWorkspaces } from '@berth/docker';
import { connectNats } from '@berth/nats';
import { loadConfig, onShutdownSignals } from '@berth/nest';
import { createStore } from '@berth/store';
import { failedToStart, startServiceTelemetry } from '@berth/telemetry';
import { startSandboxManager } from './app/start-sandbox-manager';
import { crashPointsArmedAt } from './config/crash-points';
import { ManagerConfigSchema } from './config/manager.config';

/** Composition root: the store, NATS, the Docker engine; then the manager consumes SESSION_EVT through its two consumers. */
async function main(): Promise<void> {
  const telemetry = await startServiceTelemetry('sandbox-manager');
  const { log } = telemetry;
  const config = loadConfig(ManagerConfigSchema);
  const store = createStore(config.storeUrl, { blobDir: config.blobDir });
  await store.init();
  const nc = await connectNats({ url: config.natsUrl, name: 'sandbox-manager', credsFile: config.natsCreds });
  const scopeLabels = { 'berth.scope': config.scope };
  const runtime = new DockerSandboxRuntime({ dockerHost: config.dockerHost, managedLabels: { 'berth.managed': 'true', ...scopeLabels }, egressRoot: config.egressDir });
  if (config.allowHostNetwork) log.warn('BERTH_ALLOW_HOST_NETWORK is on: environments may run sandboxes on the host network, with no egress and no isolation from the platform');
  // Before anything creates sandboxes: a directory made for a container not created yet must not look orphaned.
  const pruned = await runtime.pruneEgressDirectories();
  if (pruned > 0) log.info('start: removed the egress directories of containers that are gone', { removed: pruned });
  const detected = config.workspaceStorage === 'auto' ? await detectWorkspaceKind(runtime.docker) : { kind: config.workspaceStorage, reason: 'BERTH_WORKSPACE_STORAGE' };
  const loop = detected.kind === 'loop' ? new LoopWorkspaces(resolve(config.workspaceDir)) : null;
  const workspaces = loop ?? new VolumeWorkspaces(runtime.docker, scopeLabels);
  if (loop === null) {
    log.warn('workspaces: volume; Docker volumes have no size limit, so resources.workspace_mb is not enforced, and no per-turn snapshots are taken, so sessions cannot be forked', { reason: detected.reason });
  } else log.info('workspaces: loop', { reason: detected.reason, dir: resolve(config.workspaceDir) });
  const manager = await startSandboxManager({
    nc,
    store,
    runtime,
    workspaces,
    ...(loop !== null ? { snapshots: new LoopWorkspaceSnapshots(resolve(config.workspaceDir), loop) } : {}),
    workspaceBytes: config.workspaceBytes,
    images: new DockerSandboxImages(runtime.docker, config.imageBuild),
    clock: systemClock,
    log,
    sandboxImage: config.sandboxImage,
    warmPoolSize: config.warmPoolSize,
    allowHostNetwork: config.allowHostNetwork,
    scopeLabels,
    crash: crashPointsArmedAt(config.crashPoint),
    delivery: { ackWaitMs: config.ackWaitMs, maxDeliver: config.maxDeliver, concurrency: config.concurrency, controlConcurrency: config.controlConcurrency },
    leaseSweepMs: config.leaseSweepMs,
    poolSweepMs: config.poolSweepMs,
    registry: telemetry.registry,
  });
  onShutdownSignals([
    { name: 'stop consuming and the watchers', run: () => manager.stop() },
    { name: 'drain the NATS connection', run: () => nc.drain() },
    { name: 'close the store', run: () => store.close() },
    { name: 'stop metrics and flush traces', run: () => telemetry.shutdown() },
  ], log);
  log.info('ready: consuming SESSION_EVT', {
    consumers: [Consumers.sandboxManagerTurns, Consumers.sandboxManagerControl],
    nats: config.natsUrl,
    docker: config.dockerHost,
    metrics: telemetry.metrics?.url ?? null,
  });
}

main().catch(failedToStart('sandbox-manager'));
