import type { Clock } from '@berth/core';
import type { AgentStore, CommandBus, EnvironmentStore, Logger, SecretBox, SessionJournal, SessionReadModel, SessionSnapshots, VaultStore } from '@berth/ports';
import type { CertificateAuthority } from '@berth/secrets';
import { createSessionKernel } from '@berth/session-kernel';
import type { Server } from 'node:http';
import { directoryNames } from '../context/directory-names';
import { SandboxContexts, type SandboxNames } from '../context/sandbox-contexts';
import { BuildDenials } from '../denials/build-denials';
import { DenialReporter } from '../denials/denial-reporter';
import { Destinations } from '../proxy/destinations';
import { ModelForwarder } from '../proxy/model-forwarder';
import { PlatformAddresses } from '../proxy/platform-addresses';
import { createSandboxProxy } from '../proxy/sandbox-proxy';
import { upstreamProxyFrom } from '../proxy/upstream-proxy';
import { SandboxSockets } from '../sockets/sandbox-sockets';
import { LeafCertificates } from '../tls/leaf-certificates';
import { sandboxTrustOf, writeSandboxTrust } from '../tls/sandbox-trust';
import { TerminatedTunnels } from '../tls/terminated-tunnels';

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
  /** The install's CA: it signs the certificates of the hosts the egress terminates TLS for. */
  ca: CertificateAuthority;
  /** PEM certificates an upstream may chain to besides the public roots (tests; an internal CA). */
  upstreamCa: readonly string[];
  /** Package mirrors image builds may reach on a private network (the operator's; never loopback or this machine). */
  buildMirrorHosts?: readonly string[];
  /** Hosts of the platform's own services (NATS, the store), refused even when public. */
  platformHosts: readonly string[];
  connectTimeoutMs: number;
  contextCacheMs: number;
  rescanMs: number;
  /** Tests: a resolver standing in for DNS. */
  resolve?: (host: string) => Promise<readonly string[]>;
  /**
   * Kubernetes sandbox pods: one TCP listener (the egress Service's target) where a connection's
   * source address is the pod's identity, resolved to its sandbox through the API (`names`).
   */
  pods?: Readonly<{ host: string; port: number; names: SandboxNames }>;
}>;

export type RunningEgress = Readonly<{ sockets: SandboxSockets; podListener: Readonly<{ host: string; port: number }> | null; stop(): Promise<void> }>;

/** `::ffff:10.0.0.5` (an IPv4 peer on a dual-stack socket) is the pod IP `10.0.0.5`. */
const peerAddress = (address: string | undefined): string => (address ?? '').replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/, '$1');

/** Composes the egress proxy and starts serving every sandbox directory under `root`. */
export async function startEgress(input: EgressInput): Promise<RunningEgress> {
  const upstream = input.upstreamProxy === null ? null : upstreamProxyFrom(input.upstreamProxy);
  const platform = new PlatformAddresses(input.platformHosts);
  await platform.start();
  const destinations = new Destinations({ platform, upstream, connectTimeoutMs: input.connectTimeoutMs, resolve: input.resolve });
  const models = new ModelForwarder({ destinations, upstream, keys: input.keys, connectTimeoutMs: input.connectTimeoutMs });
  // Only `load` is used: the egress reads sessions the way the kernel folds them, and never writes.
  const sessions = createSessionKernel({ ...input.store, clock: input.clock, cachedSessions: 0 });
  const contextsOf = (names: SandboxNames) =>
    new SandboxContexts({
      names,
      sessions,
      environments: input.store.environments,
      agents: input.store.agents,
      vaults: input.store.vaults,
      secrets: input.secrets,
      log: input.log,
      model: input.model,
      cacheMs: input.contextCacheMs,
    });
  const contexts = contextsOf(directoryNames(input.root));
  const tunnels = new TerminatedTunnels({
    leaves: new LeafCertificates({ ca: input.ca }),
    destinations,
    upstreamCa: input.upstreamCa,
    connectTimeoutMs: input.connectTimeoutMs,
    clock: input.clock,
    log: input.log,
  });
  const trust = sandboxTrustOf(input.ca.certPem);
  const denials = new DenialReporter({ bus: input.bus, log: input.log, now: () => input.clock.now() });
  const builds = new BuildDenials({ root: input.root, log: input.log });
  const proxyDeps = { destinations, models, tunnels, denials, builds, buildMirrorHosts: new Set((input.buildMirrorHosts ?? []).map((h) => h.toLowerCase())), connectTimeoutMs: input.connectTimeoutMs, clock: input.clock, log: input.log, refused: input.refused ?? (() => undefined) };
  const sockets = new SandboxSockets({
    root: input.root,
    rescanMs: input.rescanMs,
    log: input.log,
    serverFor: (dirId) => createSandboxProxy(() => dirId, { ...proxyDeps, contexts }),
    beforeListen: (socketDir) => writeSandboxTrust(socketDir, trust),
    onGone: (dirId) => {
      contexts.forget(dirId);
      builds.forget(dirId);
    },
  });
  await sockets.start();
  let pods: Server | null = null;
  const following = new AbortController();
  let podListener: { host: string; port: number } | null = null;
  if (input.pods !== undefined) {
    const { host, port, names } = input.pods;
    const podContexts = contextsOf(names);
    void names.follow?.(following.signal, (ip) => podContexts.forget(ip));
    pods = createSandboxProxy((req) => peerAddress(req.socket.remoteAddress), { ...proxyDeps, contexts: podContexts });
    const server = pods;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const address = server.address();
    podListener = { host, port: typeof address === 'object' && address !== null ? address.port : port };
  }
  return {
    sockets,
    podListener,
    async stop() {
      await sockets.stop();
      following.abort();
      if (pods !== null) {
        const server = pods;
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
      tunnels.close();
      models.close();
      platform.stop();
    },
  };
}
