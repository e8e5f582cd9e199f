import { poolSandboxLabels, poolSandboxName, SandboxLabels, sessionSandboxLabels, sessionSandboxName } from './naming';
import type { SandboxConfig, SandboxNetwork } from './sandbox-config';

/** A mount as `SandboxMount` in `@berth/ports` has it (this module is pure and imports no ports). */
export type SandboxMountDraft = Readonly<{ type: 'volume' | 'bind' | 'tmpfs'; source?: string; target: string; readOnly?: boolean }>;

/** The session workspace a sandbox mounts (see `SessionWorkspaces`): its id is labelled on the container. */
export type WorkspaceMounts = Readonly<{ id: string; mounts: readonly SandboxMountDraft[] }>;

/** Where the sandbox's egress directory is mounted and which loopback port its relay listens on. */
export type SandboxEgressDraft = Readonly<{ mountAt: string; relayPort: number | null }>;

/** The container a sandbox runs as: same shape as `SandboxSpec` in `@berth/ports`. */
export type SandboxSpecDraft = Readonly<{
  name: string;
  image: string;
  labels: Readonly<Record<string, string>>;
  env: Readonly<Record<string, string>>;
  /** Docker's network mode: `none` for `egress` and `none` sandboxes, `host` for `host`. */
  network: 'none' | 'host';
  egress: SandboxEgressDraft;
  user: string;
  workdir: string;
  memoryBytes: number;
  nanoCpus: number;
  pidsLimit: number;
  readOnlyRoot: boolean;
  cmd: readonly string[];
  mounts: readonly SandboxMountDraft[];
}>;

/** uid/gid 1000 is the `agent` user of the harness image; numeric so images without it still work. */
export const SANDBOX_USER = '1000:1000';
export const SANDBOX_HOME = '/home/agent';
export const SANDBOX_WORKDIR = '/workspace';

/** Where the egress directory (the proxy's unix socket, nothing else) is mounted, read-only. */
export const EGRESS_MOUNT = '/run/berth';
/** The socket file the egress proxy listens on in that directory. */
export const EGRESS_SOCKET_FILE = 'egress.sock';
/**
 * The egress's CA certificate, which the egress writes beside its socket before it listens: a
 * sandbox trusts it so that the egress can add vault credentials to HTTPS requests for the hosts
 * those credentials are bound to (the CA's key never leaves the egress).
 */
export const EGRESS_CA_FILE = 'ca.pem';
/** The public roots plus that CA, for clients whose variable replaces their roots instead of adding to them. */
export const EGRESS_CA_BUNDLE_FILE = 'ca-bundle.pem';
/** The relay's loopback port inside an `egress`/`none` sandbox (its own network namespace, so one port fits all). */
export const EGRESS_RELAY_PORT = 3128;
/** The variable the relay reads its port from (a `host` sandbox gets a free host port instead). */
export const EGRESS_RELAY_PORT_ENV = 'BERTH_EGRESS_RELAY_PORT';
/**
 * Set where the egress is a TCP service instead of a socket in the sandbox (a Kubernetes pod:
 * `host:port` of the egress Service, the only address its NetworkPolicy lets it reach).
 */
export const EGRESS_TCP_ENV = 'BERTH_EGRESS_TCP';

/**
 * PID 1: the relay from the loopback port to the egress socket (socat, restarted if it dies, e.g.
 * killed by the agent), and a wait that exits promptly on SIGTERM (a bare `sleep` as PID 1 ignores
 * it and a stop waits). While the egress restarts, each connection waits up to 30 s for its socket
 * (`retry`) instead of failing, so a harness does not spend its own retries and back-offs on the
 * gap. An image without socat still runs; its sandbox just has no way out. With `BERTH_EGRESS_TCP`
 * set (a pod) the relay connects to that address instead of the socket.
 */
export const KEEPALIVE_CMD: readonly string[] = [
  '/bin/sh',
  '-c',
  "trap 'exit 0' TERM INT; " +
    `if command -v socat >/dev/null 2>&1 && [ -n "$${EGRESS_RELAY_PORT_ENV}" ]; then ` +
    `if [ -n "$${EGRESS_TCP_ENV}" ]; then to="TCP:$${EGRESS_TCP_ENV}"; else to="UNIX-CONNECT:${EGRESS_MOUNT}/${EGRESS_SOCKET_FILE}"; fi; ` +
    `(while :; do socat TCP-LISTEN:$${EGRESS_RELAY_PORT_ENV},bind=127.0.0.1,reuseaddr,fork "$to,retry=60,interval=0.5"; sleep 1; done) >/dev/null 2>&1 & ` +
    'fi; sleep infinity & wait',
];

/** The relay's address as the harness and the agent's tools see it. */
export const relayUrl = (port: number): string => `http://127.0.0.1:${port}`;

/**
 * Proxy variables for every process of an `egress`/`none` sandbox: HTTP(S) goes to the relay,
 * the relay itself (the model endpoint) is reached directly. A `host` sandbox gets none: its
 * tools use the host's network as they find it.
 */
export function egressProxyEnv(network: SandboxNetwork): Record<string, string> {
  if (network === 'host') return {};
  const proxy = relayUrl(EGRESS_RELAY_PORT);
  const noProxy = '127.0.0.1,localhost,::1';
  return { HTTP_PROXY: proxy, HTTPS_PROXY: proxy, http_proxy: proxy, https_proxy: proxy, NO_PROXY: noProxy, no_proxy: noProxy, ...egressTrustEnv() };
}

/**
 * The variables that make a sandbox's clients trust the egress's CA. Node (Claude Code, Pi, npm's
 * own fetches) adds `NODE_EXTRA_CA_CERTS` to its roots; OpenSSL, Python, Rust's native-roots
 * loaders and Codex read `SSL_CERT_FILE`, and curl, requests/pip and git their own variable, all
 * of which replace the roots: those get the bundle (public roots plus the CA).
 */
export function egressTrustEnv(): Record<string, string> {
  const ca = `${EGRESS_MOUNT}/${EGRESS_CA_FILE}`;
  const bundle = `${EGRESS_MOUNT}/${EGRESS_CA_BUNDLE_FILE}`;
  return { NODE_EXTRA_CA_CERTS: ca, SSL_CERT_FILE: bundle, CURL_CA_BUNDLE: bundle, REQUESTS_CA_BUNDLE: bundle, GIT_SSL_CAINFO: bundle };
}

function baseSpec(name: string, labels: Record<string, string>, config: SandboxConfig, workspace: WorkspaceMounts): SandboxSpecDraft {
  return {
    name,
    image: config.image,
    labels: { ...labels, [SandboxLabels.workspace]: workspace.id },
    env: { HOME: SANDBOX_HOME, ...egressProxyEnv(config.network) },
    network: config.network === 'host' ? 'host' : 'none',
    egress: { mountAt: EGRESS_MOUNT, relayPort: config.network === 'host' ? null : EGRESS_RELAY_PORT },
    user: SANDBOX_USER,
    workdir: SANDBOX_WORKDIR,
    memoryBytes: config.memoryBytes,
    nanoCpus: config.nanoCpus,
    pidsLimit: config.pidsLimit,
    readOnlyRoot: config.readOnlyRoot,
    cmd: KEEPALIVE_CMD,
    mounts: workspace.mounts,
  };
}

export function sessionSandboxSpec(input: {
  sessionId: string;
  generation: number;
  environmentId: string;
  config: SandboxConfig;
  workspace: WorkspaceMounts;
}): SandboxSpecDraft {
  return baseSpec(
    sessionSandboxName(input.sessionId, input.generation),
    sessionSandboxLabels(input.sessionId, input.generation, input.environmentId),
    input.config,
    input.workspace,
  );
}

/**
 * A short fingerprint of what a container is started with (image, network, limits, root mode):
 * a warm container made for an older config of its environment is never handed out. FNV-1a, not
 * a security hash: it only has to tell configs apart.
 */
export function sandboxConfigFingerprint(config: SandboxConfig): string {
  // `egress-2`: containers made before the egress relay (no socket mount, no relay), or before
  // they trusted the egress's CA, never fit.
  const text = JSON.stringify(['egress-2', config.image, config.network, config.memoryBytes, config.nanoCpus, config.pidsLimit, config.readOnlyRoot, config.workspaceBytes]);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

export function poolSandboxSpec(input: { environmentId: string; slot: string; config: SandboxConfig; workspace: WorkspaceMounts }): SandboxSpecDraft {
  const labels = { ...poolSandboxLabels(input.environmentId), [SandboxLabels.poolSpec]: sandboxConfigFingerprint(input.config) };
  return baseSpec(poolSandboxName(input.environmentId, input.slot), labels, input.config, input.workspace);
}
