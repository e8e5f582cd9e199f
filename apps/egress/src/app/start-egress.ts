import type { Clock } from '@berth/core';
import type { AgentStore, CommandBus, EnvironmentStore, Logger, SecretBox, SessionJournal, SessionReadModel, SessionSnapshots, VaultStore } from '@berth/ports';
import { createSessionKernel } from '@berth/session-kernel';
import { SandboxContexts } from '../context/sandbox-contexts';
import { BuildDenials } from '../denials/build-denials';
import { DenialReporter } from '../denials/denial-reporter';
import { Destinations } from '../proxy/destinations';
import { ModelForwarder } from '../proxy/model-forwarder';
import { PlatformAddresses } from '../proxy/platform-addresses';
import { createSandboxProxy } from '../proxy/sandbox-proxy';
import { upstreamProxyFrom } from '../proxy/upstream-proxy';
import { SandboxSockets } from '../sockets/sandbox-sockets';

export type EgressInput = Readonly<{
  root: string;
  store: Readonly<{ journal: SessionJournal; snapshots: SessionSnapshots; sessions: SessionReadModel; environments: EnvironmentStore; agents: AgentStore; vaults: VaultStore }>;
  /** Opens the vault credentials the egress injects (BERTH_SECRET_KEYS, the gateway's key ring). */
  secrets: SecretBox;
  /** Set once NATS is connected; refusals before that are logged, not recorded. */
  bus: () => CommandBus | null;
  clock: Clock;
  log: Logger;
  /** Counts every refusal by reason (`berth_egress_denials_total`). */
  refused?: (reason: string) => void;
  model: Readonly<{ baseUrl: string | null; trustedHosts: readonly string[] }>;
  keys: Readonly<Record<string, string>>;
  upstreamProxy: string | null;
  /** Hosts of the platform's own services (NATS, the store), refused even when public. */
  platformHosts: readonly string[];
  connectTimeoutMs: number;
  contextCacheMs: number;
  rescanMs: number;
  /** Tests: a resolver standing in for DNS. */
  resolve?: (host: string) => Promise<readonly string[]>;
}>;

export type RunningEgress = Readonly<{ sockets: SandboxSockets; stop(): Promise<void> }>;

/** Composes the egress proxy and starts serving every sandbox directory under `root`. */
export async function startEgress(input: EgressInput): Promise<RunningEgress> {
  const upstream = input.upstreamProxy === null ? null : upstreamProxyFrom(input.upstreamProxy);
  const platform = new PlatformAddresses(input.platformHosts);
  await platform.start();
  const destinations = new Destinations({ platform, upstream, connectTimeoutMs: input.connectTimeoutMs, resolve: input.resolve });
  const models = new ModelForwarder({ destinations, upstream, keys: input.keys, connectTimeoutMs: input.connectTimeoutMs });
  // Only `load` is used: the egress reads sessions the way the kernel folds them, and never writes.
  const sessions = createSessionKernel({ ...input.store, clock: input.clock, cachedSessions: 0 });
  const contexts = new SandboxContexts({
    root: input.root,
    sessions,
    environments: input.store.environments,
    agents: input.store.agents,
    vaults: input.store.vaults,
    secrets: input.secrets,
    log: input.log,
    model: input.model,
    cacheMs: input.contextCacheMs,
  });
  const denials = new DenialReporter({ bus: input.bus, log: input.log, now: () => input.clock.now() });
  const builds = new BuildDenials({ root: input.root, log: input.log });
  const sockets = new SandboxSockets({
    root: input.root,
    rescanMs: input.rescanMs,
    log: input.log,
    serverFor: (dirId) =>
      createSandboxProxy(dirId, { contexts, destinations, models, denials, builds, connectTimeoutMs: input.connectTimeoutMs, log: input.log, refused: input.refused ?? (() => undefined) }),
    onGone: (dirId) => {
      contexts.forget(dirId);
      builds.forget(dirId);
    },
  });
  await sockets.start();
  return {
    sockets,
    async stop() {
      await sockets.stop();
      models.close();
      platform.stop();
    },
  };
}
