import { isModelKeyName } from '@berth/egress-domain';
import { z } from 'zod';

const int = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const optional = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? null : v.trim()));
const list = z
  .string()
  .optional()
  .transform((v) => (v ?? '').split(',').map((h) => h.trim()).filter((h) => h !== ''));
const httpUrl = (name: string) =>
  optional.refine((v) => v === null || /^https?:\/\/[^\s]+$/.test(v), `${name} must be an http:// or https:// URL`);

/**
 * The egress proxy's environment. It holds the model keys (the only service that does): the
 * server-wide `BERTH_MODEL_API_KEY` and any `BERTH_MODEL_KEY_<NAME>` an environment may name.
 */
export const EgressConfigSchema = z
  .object({
    NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
    /** This service's NATS user (`nats-init` writes one per service); unset only for a server without auth. */
    NATS_CREDS: z.string().min(1).optional(),
    BERTH_STORE_URL: z.string().min(1).default('sqlite:./.berth/berth.db'),
    /** One directory per sandbox, made by the sandbox-manager; the same host path for both services. */
    BERTH_EGRESS_DIR: z.string().min(1).default('/run/berth/egress'),
    BERTH_MODEL_BASE_URL: httpUrl('BERTH_MODEL_BASE_URL'),
    BERTH_MODEL_API_KEY: optional,
    /** Hosts an environment's own `config.model.base_url` may name although they are not public (development and tests: e.g. 127.0.0.1). */
    BERTH_MODEL_TRUSTED_HOSTS: list,
    /**
     * Hosts of the operator's package mirrors on an internal network (the sandbox-manager's
     * BERTH_APT_MIRROR, BERTH_NPM_REGISTRY, BERTH_PIP_INDEX_URL): environment image builds may reach
     * them at private addresses (10/8, 172.16/12, 192.168/16, fc00::/7), never at loopback,
     * link-local or this machine's. Sandboxes gain nothing.
     */
    BERTH_EGRESS_BUILD_MIRROR_HOSTS: list,
    /** A proxy every destination (and a non-local model endpoint) is reached through, e.g. a corporate proxy. */
    BERTH_EGRESS_UPSTREAM_PROXY: httpUrl('BERTH_EGRESS_UPSTREAM_PROXY').refine((v) => v === null || v.startsWith('http://'), 'BERTH_EGRESS_UPSTREAM_PROXY must be an http:// proxy URL'),
    /**
     * Where the install's CA lives (`ca-key.pem`, 0600, and `ca.pem`; made on first start): the egress
     * terminates TLS with it for the hosts of a session's vault credentials. Keep it with the other
     * secrets of the platform; it never enters a sandbox.
     */
    BERTH_EGRESS_CA_DIR: z.string().min(1).default('./.berth/egress-ca'),
    /** PEM file of CAs an upstream's certificate may chain to besides the public roots (tests; an internal CA). */
    BERTH_EGRESS_UPSTREAM_CA_FILE: optional,
    BERTH_EGRESS_CONNECT_TIMEOUT_MS: int(5_000),
    /** How long a sandbox's session, environment and agent, once read from the store, are reused. */
    BERTH_EGRESS_CONTEXT_CACHE_MS: int(1_000),
    /** Directory rescan period, besides the file-system watch. */
    BERTH_EGRESS_RESCAN_MS: int(2_000),
    /** Kubernetes sandboxes: `host:port` the egress listens on for sandbox pods (the egress Service's target), e.g. `0.0.0.0:3128`. */
    BERTH_EGRESS_LISTEN: z
      .string()
      .regex(/^[^\s:]+:\d{1,5}$/, 'host:port')
      .optional(),
    /** Kubernetes sandboxes: the namespace of the sandbox pods, whose IPs identify them. */
    BERTH_EGRESS_K8S_NAMESPACE: z.string().regex(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, 'a namespace name').optional(),
    /** Kubernetes sandboxes: a kubeconfig file, or `in-cluster`. */
    BERTH_EGRESS_K8S_KUBECONFIG: z.string().min(1).default('in-cluster'),
  })
  .superRefine((env, ctx) => {
    if (env.BERTH_EGRESS_LISTEN !== undefined && env.BERTH_EGRESS_K8S_NAMESPACE === undefined) {
      ctx.addIssue({ code: 'custom', path: ['BERTH_EGRESS_K8S_NAMESPACE'], message: 'required with BERTH_EGRESS_LISTEN: a pod is identified by its IP through the Kubernetes API' });
    }
  })
  .transform((env) => ({
    natsUrl: env.NATS_URL,
    natsCreds: env.NATS_CREDS ?? null,
    storeUrl: env.BERTH_STORE_URL,
    root: env.BERTH_EGRESS_DIR,
    model: { baseUrl: env.BERTH_MODEL_BASE_URL, trustedHosts: env.BERTH_MODEL_TRUSTED_HOSTS },
    defaultKey: env.BERTH_MODEL_API_KEY,
    upstreamProxy: env.BERTH_EGRESS_UPSTREAM_PROXY,
    buildMirrorHosts: env.BERTH_EGRESS_BUILD_MIRROR_HOSTS,
    caDir: env.BERTH_EGRESS_CA_DIR,
    upstreamCaFile: env.BERTH_EGRESS_UPSTREAM_CA_FILE,
    connectTimeoutMs: env.BERTH_EGRESS_CONNECT_TIMEOUT_MS,
    contextCacheMs: env.BERTH_EGRESS_CONTEXT_CACHE_MS,
    rescanMs: env.BERTH_EGRESS_RESCAN_MS,
    pods:
      env.BERTH_EGRESS_LISTEN === undefined
        ? null
        : {
            host: env.BERTH_EGRESS_LISTEN.slice(0, env.BERTH_EGRESS_LISTEN.lastIndexOf(':')),
            port: Number(env.BERTH_EGRESS_LISTEN.slice(env.BERTH_EGRESS_LISTEN.lastIndexOf(':') + 1)),
            namespace: env.BERTH_EGRESS_K8S_NAMESPACE as string,
            kubeconfig: env.BERTH_EGRESS_K8S_KUBECONFIG,
          },
  }));
export type EgressConfig = z.infer<typeof EgressConfigSchema>;

/** The model keys by name: the default key and every `BERTH_MODEL_KEY_<NAME>` of the process. */
export function modelKeysFrom(env: NodeJS.ProcessEnv, defaultKey: string | null): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (name !== 'BERTH_MODEL_API_KEY' && isModelKeyName(name) && value !== undefined && value.trim() !== '') keys[name] = value.trim();
  }
  if (defaultKey !== null) keys['BERTH_MODEL_API_KEY'] = defaultKey;
  return keys;
}
