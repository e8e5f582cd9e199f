import 'reflect-metadata';
import { systemClock } from '@berth/core';
import { DockerSandboxRuntime } from '@berth/docker';
import { connectNats } from '@berth/nats';
import { loadConfig, onShutdownSignals } from '@berth/nest';
import { createStore } from '@berth/store';
import { Logger } from '@nestjs/common';
import { startSandboxManager } from './app/start-sandbox-manager';
import { crashPointsArmedAt } from './config/crash-points';
import { ManagerConfigSchema } from './config/manager.config';

/** Composition root: the store, NATS, the Docker engine; then the manager consumes SESSION_EVT. */
async function main(): Promise<void> {
  const log = new Logger('sandbox-manager');
  const config = loadConfig(ManagerConfigSchema);
  const store = createStore(config.storeUrl);
  await store.init();
  const nc = await connectNats({ url: config.natsUrl, name: 'sandbox-manager' });
  const scopeLabels = { 'berth.scope': config.scope };
  const runtime = new DockerSandboxRuntime({ dockerHost: config.dockerHost, managedLabels: { 'berth.managed': 'true', ...scopeLabels }, egressRoot: config.egressDir });
  if (config.allowHostNetwork) log.warn('BERTH_ALLOW_HOST_NETWORK is on: environments may run sandboxes on the host network, with no egress and no isolation from the platform');
  // Before anything creates sandboxes: a directory made for a container not created yet must not look orphaned.
  const pruned = await runtime.pruneEgressDirectories();
  if (pruned > 0) log.log(`start: removed ${pruned} egress director${pruned === 1 ? 'y' : 'ies'} of containers that are gone`);
  const manager = await startSandboxManager({
    nc,
    store,
    runtime,
    clock: systemClock,
    log,
    model: config.model,
    sandboxImage: config.sandboxImage,
    warmPoolSize: config.warmPoolSize,
    allowHostNetwork: config.allowHostNetwork,
    scopeLabels,
    crash: crashPointsArmedAt(config.crashPoint),
    delivery: { ackWaitMs: config.ackWaitMs, maxDeliver: config.maxDeliver, concurrency: config.concurrency },
    leaseSweepMs: config.leaseSweepMs,
    poolSweepMs: config.poolSweepMs,
  });
  onShutdownSignals([
    { name: 'stop consuming and the watchers', run: () => manager.stop() },
    { name: 'drain the NATS connection', run: () => nc.drain() },
    { name: 'close the store', run: () => store.close() },
  ]);
  log.log(`ready: consuming SESSION_EVT/sandbox-manager from ${config.natsUrl}, docker ${config.dockerHost}`);
}

main().catch((e) => {
  console.error(`sandbox-manager failed to start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
