import 'reflect-metadata';
import { systemClock } from '@berth/core';
import { connectNats, JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { loadConfig, onShutdownSignals } from '@berth/nest';
import type { CommandBus } from '@berth/ports';
import { createStore } from '@berth/store';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { Logger } from '@nestjs/common';
import { startEgress } from './app/start-egress';
import { EgressConfigSchema, modelKeysFrom } from './config/egress.config';
import { hostsOfServiceUrl } from './proxy/platform-addresses';

/**
 * Composition root: the store (read only), the sandbox sockets, then NATS for reporting refusals.
 * Sandboxes are served before the broker answers: model access never waits for NATS.
 */
async function main(): Promise<void> {
  const log = new Logger('egress');
  const config = loadConfig(EgressConfigSchema);
  const store = createStore(config.storeUrl);
  await store.init();
  let bus: CommandBus | null = null;
  const egress = await startEgress({
    root: config.root,
    store,
    bus: () => bus,
    clock: systemClock,
    log,
    model: config.model,
    keys: modelKeysFrom(process.env, config.defaultKey),
    upstreamProxy: config.upstreamProxy,
    platformHosts: [...hostsOfServiceUrl(config.natsUrl), ...hostsOfServiceUrl(config.storeUrl)],
    connectTimeoutMs: config.connectTimeoutMs,
    contextCacheMs: config.contextCacheMs,
    rescanMs: config.rescanMs,
  });
  if (config.model.baseUrl === null) log.warn('no model endpoint: turns fail until BERTH_MODEL_BASE_URL (and BERTH_MODEL_API_KEY) are set, or an environment sets config.model.base_url');
  const nc: NatsConnection = await connectNats({ url: config.natsUrl, name: 'egress' });
  bus = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)));
  onShutdownSignals([
    { name: 'stop serving sandboxes', run: () => egress.stop() },
    { name: 'drain the NATS connection', run: () => nc.drain() },
    { name: 'close the store', run: () => store.close() },
  ]);
  log.log(
    `ready: serving ${egress.sockets.served().length} sandbox socket(s) under ${config.root}, model ${config.model.baseUrl === null ? "(none)" : new URL(config.model.baseUrl).host}${config.upstreamProxy === null ? '' : `, upstream proxy ${new URL(config.upstreamProxy).host}`}`,
  );
}

main().catch((e) => {
  console.error(`egress failed to start: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
