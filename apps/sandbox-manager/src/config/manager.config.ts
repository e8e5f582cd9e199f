import { z } from 'zod';
import { ENGINE_WAIT_MS } from '../sandboxes/sandbox-service';
import { CRASH_POINTS } from './crash-points';

const int = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** One Docker engine sandboxes may be placed on (`BERTH_SANDBOX_HOSTS`). */
const SandboxHostSchema = z
  .object({
    /** Recorded with each sandbox placed there (`berth.sandbox_bound`.host). */
    name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/, "lowercase letters, digits and '-'"),
    docker_host: z.string().regex(/^(unix|tcp):\/\/\S+$/, 'unix:///path or tcp://host:port'),
    /** This host's egress directory: the egress process on that host serves the same path. */
    egress_dir: z.string().min(1),
    max_sandboxes: z.number().int().positive().max(100_000),
  })
  .strict();

/** A JSON list of sandbox hosts; unset or empty: the one engine of DOCKER_HOST, without a limit. */
const SandboxHostsSchema = z
  .string()
  .optional()
  .transform((raw, ctx) => {
    if (raw === undefined || raw.trim() === '') return [];
    try {
      return JSON.parse(raw) as unknown;
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `not JSON: ${error instanceof Error ? error.message : String(error)}` });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .array(SandboxHostSchema)
      .max(64)
      .refine((hosts) => new Set(hosts.map((h) => h.name)).size === hosts.length, 'two hosts have one name')
      .refine((hosts) => new Set(hosts.map((h) => h.egress_dir)).size === hosts.length, 'two hosts share an egress_dir'),
  );
/** An http(s) URL, or unset (empty counts as unset). */
const mirrorUrl = z.preprocess(
  (v) => (v === '' ? undefined : v),
  z
    .string()
    .url()
    .refine((v) => /^https?:\/\//.test(v), 'an http:// or https:// URL')
    .optional(),
);
const flag = z
  .enum(['true', 'false', '1', '0', ''])
  .optional()
  .transform((v) => v === 'true' || v === '1');

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The sandbox-manager's environment. It holds no model key: harnesses reach their model through
 * the egress proxy, which adds it (see apps/egress).
 */
export const ManagerConfigSchema = z
  .object({
    NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
    /** This service's NATS user (`nats-init` writes one per service); unset only for a server without auth. */
    NATS_CREDS: z.string().min(1).optional(),
    BERTH_STORE_URL: z.string().min(1).default('sqlite:./.berth/berth.db'),
    DOCKER_HOST: z.string().min(1).default('unix:///run/berth-docker.sock'),
    /** Where sandboxes run: containers on Docker engines, or agent-sandbox `Sandbox`es on a Kubernetes cluster (docs/scale-out.md, "Kubernetes"). */
    BERTH_SANDBOX_RUNTIME: z.enum(['docker', 'kubernetes']).default('docker'),
    /** Kubernetes: a kubeconfig file, or `in-cluster` (the manager's pod's service account). */
    BERTH_K8S_KUBECONFIG: z.string().min(1).default('in-cluster'),
    /** Kubernetes: the namespace of the sandboxes, their workspace claims and their NetworkPolicy. */
    BERTH_K8S_NAMESPACE: z.string().regex(DNS_LABEL, 'a namespace name (a DNS label)').optional(),
    /** Kubernetes: `namespace/name` of the egress Service (apps/egress listening on TCP), the sandboxes' only way out. */
    BERTH_K8S_EGRESS_SERVICE: z.string().regex(/^[a-z0-9-]{1,63}\/[a-z0-9-]{1,63}$/, 'namespace/name of a Service').optional(),
    /** Kubernetes: the StorageClass of workspace claims (empty: the cluster's default). */
    BERTH_K8S_STORAGE_CLASS: z.string().optional(),
    /**
     * Several Docker engines to place sandboxes on, e.g.
     * `[{"name":"a","docker_host":"unix:///run/a.sock","egress_dir":"/run/berth/egress-a","max_sandboxes":20}]`;
     * then DOCKER_HOST and BERTH_EGRESS_DIR are not used (see docs/sandboxes.md, "Several Docker hosts").
     */
    BERTH_SANDBOX_HOSTS: SandboxHostsSchema,
    /** How often each sandbox host is pinged; three missed pings in a row and it is lost. */
    BERTH_SANDBOX_HOST_PROBE_MS: int(1000),
    /** One directory per sandbox for its egress socket; the egress serves the same host path. */
    BERTH_EGRESS_DIR: z.string().min(1).default('/run/berth/egress'),
    /** Lets environments run sandboxes on the host's network (`config.network: host`): no egress, no isolation. Unsafe. */
    BERTH_ALLOW_HOST_NETWORK: flag,
    BERTH_SANDBOX_IMAGE: z.string().min(1).default('berth/harness:latest'),
    /** Retired: image builds run in a container made like a sandbox and reach out only through the egress. */
    BERTH_IMAGE_BUILD_NETWORK: z
      .string()
      .optional()
      .refine((v) => v === undefined || v === '', 'retired: environment image builds reach their package registries through the egress, on no network of their own (docs/sandboxes.md, "Environment images"); unset it'),
    /** A Debian archive mirror (the layout of deb.debian.org/debian) environment image builds install apt packages from, instead of the image's sources. */
    BERTH_APT_MIRROR: mirrorUrl,
    /** The OpenPGP public key (a binary keyring file) the apt mirror signs with, when it re-signs; unset: Debian's keys in the image. */
    BERTH_APT_MIRROR_KEY: z.string().min(1).optional(),
    /** An npm registry environment image builds install npm packages from. */
    BERTH_NPM_REGISTRY: mirrorUrl,
    /** A Python package index (PEP 503 simple API) environment image builds install pip packages from. */
    BERTH_PIP_INDEX_URL: mirrorUrl,
    /** Extra CA certificates (`*.crt`) the package managers trust while an image builds; empty for none. */
    BERTH_BUILD_CA_DIR: z.string().default('/usr/local/share/ca-certificates'),
    /** Labels this installation's containers, so several installations can share one engine. */
    BERTH_SANDBOX_SCOPE: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).default('default'),
    /** Warm sandboxes kept per environment in use, unless the environment's `config.warm_pool.size` says otherwise. */
    BERTH_WARM_POOL_SIZE: z.coerce.number().int().min(0).max(64).default(0),
    BERTH_CRASH_POINT: z.preprocess((v) => (v === '' ? undefined : v), z.enum(CRASH_POINTS).optional()),
    /** Turns run at once (the turns consumer's window). */
    BERTH_MANAGER_CONCURRENCY: int(64),
    /** Control events (sandbox requests, interrupts, confirmations, terminate, delete) handled at once. */
    BERTH_MANAGER_CONTROL_CONCURRENCY: int(32),
    BERTH_NATS_ACK_WAIT_MS: int(30_000),
    BERTH_NATS_MAX_DELIVER: int(5),
    BERTH_LEASE_SWEEP_MS: int(15_000),
    /** How long a sandbox request waits for a Docker engine (or Kubernetes API) that does not answer before its turn fails. */
    BERTH_ENGINE_WAIT_MS: int(ENGINE_WAIT_MS),
    BERTH_POOL_SWEEP_MS: int(30_000),
    /** SQLite store only: where file contents live (default `blobs/` beside the database). */
    BERTH_BLOB_DIR: z.string().min(1).optional(),
    /** `auto`: loop when this process is root on the engine's host, else volume (see docs/sandboxes.md). */
    BERTH_WORKSPACE_STORAGE: z.enum(['auto', 'loop', 'volume']).default('auto'),
    /** Loop workspaces: where their images and mounts live. */
    BERTH_WORKSPACE_DIR: z.string().min(1).default('./.berth/workspaces'),
    /** A workspace's size limit when its environment sets no `resources.workspace_mb`. */
    BERTH_WORKSPACE_SIZE_MB: z.coerce.number().int().min(64).max(1024 * 1024).default(10_240),
  })
  .superRefine((env, ctx) => {
    if (env.BERTH_SANDBOX_RUNTIME !== 'kubernetes') return;
    const refuse = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (env.BERTH_K8S_NAMESPACE === undefined) refuse('BERTH_K8S_NAMESPACE', 'required with BERTH_SANDBOX_RUNTIME=kubernetes');
    if (env.BERTH_K8S_EGRESS_SERVICE === undefined) refuse('BERTH_K8S_EGRESS_SERVICE', 'required with BERTH_SANDBOX_RUNTIME=kubernetes: sandbox pods have no other way out');
    if (env.BERTH_SANDBOX_HOSTS.length > 0) refuse('BERTH_SANDBOX_HOSTS', 'lists Docker engines; with BERTH_SANDBOX_RUNTIME=kubernetes the cluster places sandboxes');
    if (env.BERTH_ALLOW_HOST_NETWORK) refuse('BERTH_ALLOW_HOST_NETWORK', 'a Kubernetes sandbox never runs on the node network');
    if (env.BERTH_WORKSPACE_STORAGE !== 'auto') refuse('BERTH_WORKSPACE_STORAGE', 'Kubernetes workspaces are PersistentVolumeClaims (BERTH_K8S_STORAGE_CLASS); loop and volume are Docker kinds');
  })
  .transform((env) => ({
    sandboxRuntime: env.BERTH_SANDBOX_RUNTIME,
    kubernetes:
      env.BERTH_SANDBOX_RUNTIME === 'kubernetes'
        ? {
            kubeconfig: env.BERTH_K8S_KUBECONFIG,
            namespace: env.BERTH_K8S_NAMESPACE as string,
            egressService: env.BERTH_K8S_EGRESS_SERVICE as string,
            storageClass: env.BERTH_K8S_STORAGE_CLASS === undefined || env.BERTH_K8S_STORAGE_CLASS.trim() === '' ? null : env.BERTH_K8S_STORAGE_CLASS.trim(),
          }
        : null,
    natsUrl: env.NATS_URL,
    natsCreds: env.NATS_CREDS ?? null,
    storeUrl: env.BERTH_STORE_URL,
    dockerHost: env.DOCKER_HOST,
    sandboxHosts: env.BERTH_SANDBOX_HOSTS.map((h) => ({ name: h.name, dockerHost: h.docker_host, egressDir: h.egress_dir, maxSandboxes: h.max_sandboxes })),
    hostProbeMs: env.BERTH_SANDBOX_HOST_PROBE_MS,
    egressDir: env.BERTH_EGRESS_DIR,
    allowHostNetwork: env.BERTH_ALLOW_HOST_NETWORK,
    sandboxImage: env.BERTH_SANDBOX_IMAGE,
    imageBuild: { caCertificatesDir: env.BERTH_BUILD_CA_DIR.trim() === '' ? null : env.BERTH_BUILD_CA_DIR },
    mirrors: { apt: env.BERTH_APT_MIRROR ?? null, aptKeyFile: env.BERTH_APT_MIRROR_KEY ?? null, npm: env.BERTH_NPM_REGISTRY ?? null, pip: env.BERTH_PIP_INDEX_URL ?? null },
    scope: env.BERTH_SANDBOX_SCOPE,
    warmPoolSize: env.BERTH_WARM_POOL_SIZE,
    crashPoint: env.BERTH_CRASH_POINT ?? null,
    concurrency: env.BERTH_MANAGER_CONCURRENCY,
    controlConcurrency: env.BERTH_MANAGER_CONTROL_CONCURRENCY,
    ackWaitMs: env.BERTH_NATS_ACK_WAIT_MS,
    maxDeliver: env.BERTH_NATS_MAX_DELIVER,
    leaseSweepMs: env.BERTH_LEASE_SWEEP_MS,
    engineWaitMs: env.BERTH_ENGINE_WAIT_MS,
    poolSweepMs: env.BERTH_POOL_SWEEP_MS,
    blobDir: env.BERTH_BLOB_DIR,
    workspaceStorage: env.BERTH_WORKSPACE_STORAGE,
    workspaceDir: env.BERTH_WORKSPACE_DIR,
    workspaceBytes: env.BERTH_WORKSPACE_SIZE_MB * 1024 * 1024,
  }));
export type ManagerConfig = z.infer<typeof ManagerConfigSchema>;

