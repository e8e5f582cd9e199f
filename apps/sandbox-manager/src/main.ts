import 'reflect-metadata';
import { systemClock } from '@berth/core';
import { resolve } from 'node:path';
import { detectWorkspaceKind, DockerSandboxRuntime, LoopWorkspaces, VolumeWorkspaces } from '@berth/docker';
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
  const store = createStore(config.storeUrl, { blobDir: config.blobDir });
  await store.init();
  const nc = await connectNats({ url: config.natsUrl, name: 'sandbox-manager' });
  const scopeLabels = { 'berth.scope': config.scope };
  const runtime = new DockerSandboxRuntime({ dockerHost: config.dockerHost, managedLabels: { 'berth.managed': 'true', ...scopeLabels } });
  const detected = config.workspaceStorage === 'auto' ? await detectWorkspaceKind(runtime.docker) : { kind: config.workspaceStorage, reason: 'BERTH_WORKSPACE_STORAGE' };
  const workspaces = detected.kind === 'loop' ? new LoopWorkspaces(resolve(config.workspaceDir)) : new VolumeWorkspaces(runtime.docker, scopeLabels);
  log.log(`workspaces: ${detected.kind} (${detected.reason})${detected.kind === 'volume' ? '; Docker volumes have no size limit, so resources.workspace_mb is not enforced' : ''}`);
  if (config.model.baseUrl === null) {
    log.warn('no model configured: turns will fail until BERTH_MODEL_BASE_URL and BERTH_MODEL_API_KEY are set (or an environment sets config.model)');
  }
  const manager = await startSandboxManager({
    nc,
    store,
    runtime,
    workspaces,
    workspaceBytes: config.workspaceBytes,
    clock: systemClock,
    log,
    model: config.model,
    sandboxImage: config.sandboxImage,
    warmPoolSize: config.warmPoolSize,
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
