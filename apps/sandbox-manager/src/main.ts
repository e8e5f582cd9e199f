import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { Consumers } from '@berth/contracts';
import { systemClock } from '@berth/core';
import { connectNats } from '@berth/nats';
import { loadConfig, onShutdownSignals } from '@berth/nest';
import { secretBoxFromEnv } from '@berth/secrets';
import { LeaseLock } from '@berth/sandbox-lifecycle';
import { createStore } from '@berth/store';
import { failedToStart, startServiceTelemetry } from '@berth/telemetry';
import { managerInstanceId } from './app/instance-id';
import { startSandboxManager } from './app/start-sandbox-manager';
import { crashPointsArmedAt } from './config/crash-points';
import { ManagerConfigSchema } from './config/manager.config';
import { openSandboxEngines } from './sandboxes/sandbox-engines';

/** Composition root: the store, NATS, the Docker engine; then the manager consumes SESSION_EVT through its two consumers. */
async function main(): Promise<void> {
  const telemetry = await startServiceTelemetry('sandbox-manager');
  const { log } = telemetry;
  const config = loadConfig(ManagerConfigSchema);
  const store = createStore(config.storeUrl, { blobDir: config.blobDir });
  await store.init();
  const nc = await connectNats({ url: config.natsUrl, name: 'sandbox-manager', credsFile: config.natsCreds });
  const scopeLabels = { 'berth.scope': config.scope };
  if (config.allowHostNetwork) log.warn('BERTH_ALLOW_HOST_NETWORK is on: environments may run sandboxes on the host network, with no egress and no isolation from the platform');
  // The store's leases across the managers: one placement at a time on several hosts, one build of an image tag at a time per engine.
  const lock = new LeaseLock(store.leases, managerInstanceId(), systemClock);
  const { runtime, workspaces, snapshots, images, egressSocketOf, egressSockets, close } = await openSandboxEngines(config, scopeLabels, log, lock);
  const { mirrors } = config;
  const packageMirrors = {
    apt: mirrors.apt === null ? null : { url: mirrors.apt, keyBase64: mirrors.aptKeyFile === null ? null : readFileSync(mirrors.aptKeyFile).toString('base64') },
    npm: mirrors.npm,
    pip: mirrors.pip,
  };
  const manager = await startSandboxManager({
    nc,
    store,
    runtime,
    box: secretBoxFromEnv(),
    egressSocketOf,
    workspaces,
    snapshots,
    workspaceBytes: config.workspaceBytes,
    images,
    packageMirrors,
    clock: systemClock,
    log,
    sandboxImage: config.sandboxImage,
    warmPoolSize: config.warmPoolSize,
    allowHostNetwork: config.allowHostNetwork,
    scopeLabels,
    crash: crashPointsArmedAt(config.crashPoint),
    delivery: { ackWaitMs: config.ackWaitMs, maxDeliver: config.maxDeliver, concurrency: config.concurrency, controlConcurrency: config.controlConcurrency },
    leaseSweepMs: config.leaseSweepMs,
    engineWaitMs: config.engineWaitMs,
    poolSweepMs: config.poolSweepMs,
    registry: telemetry.registry,
    egressSockets,
  });
  onShutdownSignals([
    { name: 'stop consuming and the watchers', run: () => manager.stop() },
    { name: 'stop probing the sandbox hosts', run: async () => close() },
    { name: 'drain the NATS connection', run: () => nc.drain() },
    { name: 'close the store', run: () => store.close() },
    { name: 'stop metrics and flush traces', run: () => telemetry.shutdown() },
  ], log);
  log.info('ready: consuming SESSION_EVT', {
    consumers: [Consumers.sandboxManagerTurns, Consumers.sandboxManagerControl],
    nats: config.natsUrl,
    sandboxes: config.kubernetes !== null ? `kubernetes:${config.kubernetes.namespace}` : config.sandboxHosts.length > 0 ? config.sandboxHosts.map((h) => h.name) : config.dockerHost,
    metrics: telemetry.metrics?.url ?? null,
  });
}

main().catch(failedToStart('sandbox-manager'));
