import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { systemClock } from '@berth/core';
import { connectNats, JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { loadConfig, onShutdownSignals } from '@berth/nest';
import type { CommandBus } from '@berth/ports';
import { loadKubeConfig, PodSandboxNames, publishEgressTrust } from '@berth/kubernetes';
import { loadOrCreateCertificateAuthority, secretBoxFromEnv } from '@berth/secrets';
import { createStore } from '@berth/store';
import { egressMetrics, failedToStart, startServiceTelemetry } from '@berth/telemetry';
import { jetstream } from '@nats-io/jetstream';
import { startEgress } from './app/start-egress';
import { EgressConfigSchema, modelKeysFrom } from './config/egress.config';
import { hostsOfServiceUrl } from './proxy/platform-addresses';
import { sandboxTrustFiles, sandboxTrustOf } from './tls/sandbox-trust';

/**
 * Composition root: the store (read only), the sandbox sockets, then NATS for reporting refusals.
 * Sandboxes are served before the broker answers: model access never waits for NATS.
 */
async function main(): Promise<void> {
  const telemetry = await startServiceTelemetry('egress');
  const { log } = telemetry;
  const config = loadConfig(EgressConfigSchema);
  const store = createStore(config.storeUrl);
  await store.init();
  const { denials } = egressMetrics(telemetry.registry);
  // Named per install, so that two installs' CAs are told apart in a certificate viewer.
  const ca = await loadOrCreateCertificateAuthority(config.caDir, `Berth egress CA ${randomBytes(4).toString('hex')}`);
  const upstreamCa = config.upstreamCaFile === null ? [] : [readFileSync(config.upstreamCaFile, 'utf8')];
  // Kubernetes pods: the CA reaches them as a ConfigMap they mount (published before any pod is served).
  const pods = config.pods === null ? null : { ...config.pods, kubeConfig: loadKubeConfig(config.pods.kubeconfig, 'BERTH_EGRESS_K8S_KUBECONFIG') };
  if (pods !== null) await publishEgressTrust(pods.kubeConfig, pods.namespace, sandboxTrustFiles(sandboxTrustOf(ca.certPem)));
  let bus: CommandBus | null = null;
  const egress = await startEgress({
    root: config.root,
    store,
    secrets: secretBoxFromEnv(),
    bus: () => bus,
    clock: systemClock,
    log,
    refused: (reason) => denials.inc({ reason }),
    model: config.model,
    keys: modelKeysFrom(process.env, config.defaultKey),
    upstreamProxy: config.upstreamProxy,
    buildMirrorHosts: config.buildMirrorHosts,
    ca,
    upstreamCa,
    platformHosts: [...hostsOfServiceUrl(config.natsUrl), ...hostsOfServiceUrl(config.storeUrl)],
    connectTimeoutMs: config.connectTimeoutMs,
    contextCacheMs: config.contextCacheMs,
    rescanMs: config.rescanMs,
    ...(pods === null ? {} : { pods: { host: pods.host, port: pods.port, names: new PodSandboxNames(pods.kubeConfig, pods.namespace) } }),
  });
  if (config.model.baseUrl === null) log.warn('no model endpoint: turns fail until BERTH_MODEL_BASE_URL (and BERTH_MODEL_API_KEY) are set, or an environment sets config.model.base_url');
  const nc = await connectNats({ url: config.natsUrl, name: 'egress', credsFile: config.natsCreds });
  bus = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)));
  onShutdownSignals(
    [
      { name: 'stop serving sandboxes', run: () => egress.stop() },
      { name: 'drain the NATS connection', run: () => nc.drain() },
      { name: 'close the store', run: () => store.close() },
      { name: 'stop metrics and flush traces', run: () => telemetry.shutdown() },
    ],
    log,
  );
  log.info(`ready: serving ${egress.sockets.served().length} sandbox socket(s)`, {
    dir: config.root,
    pods: egress.podListener === null ? null : `${egress.podListener.host}:${egress.podListener.port} (namespace ${config.pods?.namespace})`,
    model: config.model.baseUrl === null ? null : new URL(config.model.baseUrl).host,
    upstream_proxy: config.upstreamProxy === null ? null : new URL(config.upstreamProxy).host,
    ca: ca.certFile,
    metrics: telemetry.metrics?.url ?? null,
  });
}

main().catch(failedToStart('egress'));
