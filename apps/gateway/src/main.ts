import 'reflect-metadata';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { systemClock } from '@berth/core';
import { JetStreamPublisher, NatsCommandBus, connectNats } from '@berth/nats';
import { loadConfig, onShutdownSignals } from '@berth/nest';
import { createStore } from '@berth/store';
import { failedToStart, startServiceTelemetry } from '@berth/telemetry';
import { jetstream } from '@nats-io/jetstream';
import { createGatewayApp } from './app/create-gateway-app';
import { consoleBuildExists } from './console/serve-console';
import { GatewayConfigSchema } from './config/gateway.config';
import { NatsSandboxProbe } from './sessions/nats-sandbox-probe';
import { NatsEventFeed } from './stream/nats-event-feed';

/** Composition root: the store, NATS (commands out, live events in, sandbox probes) and HTTP. */
async function main(): Promise<void> {
  // The gateway serves /metrics on its own HTTP port.
  const telemetry = await startServiceTelemetry('gateway', { metricsPort: false });
  const { log } = telemetry;
  const config = loadConfig(GatewayConfigSchema);
  ensureSqliteDir(config.storeUrl);
  const store = createStore(config.storeUrl);
  await store.init();

  // The kernel declares the streams (applyTopology); the gateway only publishes and listens.
  const nc = await connectNats({ url: config.natsUrl, name: 'gateway' });
  const commandBus = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)), { defaultTimeoutMs: config.commandTimeoutMs });

  const app = await createGatewayApp({
    store,
    commandBus,
    eventFeed: new NatsEventFeed(nc),
    sandboxProbe: new NatsSandboxProbe(nc, systemClock, config.probeTimeoutMs),
    readiness: [
      { name: 'store', check: async () => void (await store.sessions.getById('sesn_readiness_probe')) },
      { name: 'nats', check: async () => void (await nc.flush()) },
    ],
    options: { commandTimeoutMs: config.commandTimeoutMs, heartbeatMs: config.heartbeatMs, bodyLimit: config.bodyLimit },
    log,
    pino: telemetry.pino,
    registry: telemetry.registry,
    consoleDir: config.consoleDir,
  });
  onShutdownSignals([
    { name: 'stop serving HTTP', run: () => app.close() },
    { name: 'stop waiting for command outcomes', run: async () => commandBus.close() },
    { name: 'drain the NATS connection', run: () => nc.drain() },
    { name: 'close the store', run: () => store.close() },
    { name: 'flush traces', run: () => telemetry.shutdown() },
  ], log);
  await app.listen(config.port, config.host);
  const address = app.getHttpServer().address() as { port: number };
  log.info(`ready: http://${config.host}:${address.port}`, { store: config.storeUrl, nats: config.natsUrl, console: consoleBuildExists(config.consoleDir), tracing: telemetry.tracing.exporting });
}

/** The embedded default (`sqlite:./.berth/berth.db`) lives in a directory that may not exist yet. */
function ensureSqliteDir(storeUrl: string): void {
  const path = storeUrl.startsWith('sqlite:') ? storeUrl.slice('sqlite:'.length).replace(/^\/\//, '') : '';
  if (path && path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
}

main().catch(failedToStart('gateway'));
