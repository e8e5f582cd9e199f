import { defaultRefreshPolicy } from '@berth/vaults-domain';
import { defaultDeliveryPolicy } from '@berth/webhooks-domain';
import { z } from 'zod';

const int = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const HOUR_MS = 60 * 60 * 1000;
/** Milliseconds, comma-separated (`500,2000,10000`). */
const msList = (fallback: readonly number[]) =>
  z
    .string()
    .regex(/^\d+(,\d+)*$/, 'a comma-separated list of milliseconds')
    .default(fallback.join(','))
    .transform((list) => list.split(',').map(Number));
const hours = (fallbackMs: number) => z.coerce.number().positive().default(fallbackMs / HOUR_MS);

/** Everything the gateway reads from its environment. */
export const GatewayConfigSchema = z
  .object({
    NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
    /** This service's NATS user (`nats-init` writes one per service); unset only for a server without auth. */
    NATS_CREDS: z.string().min(1).optional(),
    /** `issuer.json` from `nats-init`: enables minting outside subscribers' NATS credentials. */
    BERTH_NATS_ISSUER: z.string().min(1).optional(),
    /** The NATS URL handed to subscribers with a credential (default: NATS_URL). */
    BERTH_NATS_PUBLIC_URL: z.string().min(1).optional(),
    /** How often the revocation list is pushed to NATS again (it is also pushed at start and on every revoke). */
    BERTH_NATS_REVOCATION_SYNC_MS: int(60_000),
    BERTH_STORE_URL: z.string().min(1).default('sqlite:./.berth/berth.db'),
    PORT: z.coerce.number().int().min(0).max(65_535).default(8080),
    HOST: z.string().min(1).default('127.0.0.1'),
    BERTH_COMMAND_TIMEOUT_MS: int(10_000),
    BERTH_SSE_HEARTBEAT_MS: int(15_000),
    BERTH_BODY_LIMIT: z.string().regex(/^\d+(b|kb|mb)$/i).default('1mb'),
    BERTH_PROBE_TIMEOUT_MS: int(1_000),
    BERTH_CONSOLE_DIR: z.string().min(1).default('apps/console/dist'),
    /** Largest file upload in bytes (the reference API's limit: 500 MB). */
    BERTH_FILE_MAX_BYTES: int(500 * 1024 * 1024),
    /** SQLite store only: where file contents live (default `blobs/` beside the database). */
    BERTH_BLOB_DIR: z.string().min(1).optional(),
    /** How long a workspace read (archive, file, listing) may take the sandbox-manager. */
    BERTH_WORKSPACE_TIMEOUT_MS: int(120_000),
    /** Lets API users create environments on the host network (no egress, no isolation from the platform). Unsafe. */
    BERTH_ALLOW_HOST_NETWORK: z
      .enum(['true', 'false', '1', '0', ''])
      .optional()
      .transform((v) => v === 'true' || v === '1'),
    BERTH_NATS_ACK_WAIT_MS: int(30_000),
    BERTH_NATS_MAX_DELIVER: int(5),
    /** Copies of each owner's event stream the gateway creates; set it as the kernel's (1, or 3 on a cluster). */
    BERTH_NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
    BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS: z.enum(['true', 'false', '1', '0']).default('false'),
    BERTH_WEBHOOK_TIMEOUT_MS: int(10_000),
    BERTH_WEBHOOK_TICK_MS: int(1_000),
    BERTH_WEBHOOK_LEASE_MS: int(60_000),
    BERTH_WEBHOOK_BATCH: int(16),
    BERTH_WEBHOOK_RETENTION_DAYS: int(30),
    /** Waits between retries (and between probes of a failing endpoint), comma-separated; the last repeats. */
    BERTH_WEBHOOK_RETRY_DELAYS_MS: msList(defaultDeliveryPolicy.retryDelaysMs),
    /** How long a delivery is tried from its event; then it is failed (and can be redelivered). */
    BERTH_WEBHOOK_MAX_AGE_HOURS: hours(defaultDeliveryPolicy.maxAgeMs),
    /** How long an endpoint may fail without a break before it is disabled. */
    BERTH_WEBHOOK_DISABLE_AFTER_HOURS: hours(defaultDeliveryPolicy.disableAfterMs),
    /** mcp_oauth credentials are refreshed once less than this remains of their token… */
    BERTH_VAULT_REFRESH_MARGIN_MS: int(defaultRefreshPolicy.marginMs),
    /** …or less than this share of its lifetime (when the token endpoint gave one). */
    BERTH_VAULT_REFRESH_LIFETIME_SHARE: z.coerce.number().gt(0).lt(1).default(defaultRefreshPolicy.lifetimeShare),
    /** Waits after failed refreshes in a row, comma-separated; the last repeats. */
    BERTH_VAULT_REFRESH_RETRY_DELAYS_MS: msList(defaultRefreshPolicy.retryDelaysMs),
    BERTH_VAULT_REFRESH_TIMEOUT_MS: int(10_000),
    BERTH_VAULT_REFRESH_TICK_MS: int(1_000),
    BERTH_VAULT_REFRESH_LEASE_MS: int(30_000),
    BERTH_VAULT_REFRESH_BATCH: int(16),
  })
  .refine((env) => env.BERTH_WEBHOOK_LEASE_MS > env.BERTH_WEBHOOK_TIMEOUT_MS, {
    message: 'must exceed BERTH_WEBHOOK_TIMEOUT_MS (an attempt still running must not be claimed again)',
    path: ['BERTH_WEBHOOK_LEASE_MS'],
  })
  .refine((env) => env.BERTH_VAULT_REFRESH_LEASE_MS > env.BERTH_VAULT_REFRESH_TIMEOUT_MS, {
    message: 'must exceed BERTH_VAULT_REFRESH_TIMEOUT_MS (the refresher renews its lease before each token request, which must end within it)',
    path: ['BERTH_VAULT_REFRESH_LEASE_MS'],
  })
  .refine((env) => env.BERTH_WEBHOOK_RETENTION_DAYS * 24 > env.BERTH_WEBHOOK_MAX_AGE_HOURS, {
    message: 'must be longer than BERTH_WEBHOOK_MAX_AGE_HOURS (a failed delivery stays in the log, to be redelivered)',
    path: ['BERTH_WEBHOOK_RETENTION_DAYS'],
  })
  .transform((env) => ({
    natsUrl: env.NATS_URL,
    natsCreds: env.NATS_CREDS ?? null,
    natsIssuer: env.BERTH_NATS_ISSUER ?? null,
    natsPublicUrl: env.BERTH_NATS_PUBLIC_URL ?? env.NATS_URL,
    revocationSyncMs: env.BERTH_NATS_REVOCATION_SYNC_MS,
    storeUrl: env.BERTH_STORE_URL,
    port: env.PORT,
    host: env.HOST,
    commandTimeoutMs: env.BERTH_COMMAND_TIMEOUT_MS,
    heartbeatMs: env.BERTH_SSE_HEARTBEAT_MS,
    bodyLimit: env.BERTH_BODY_LIMIT,
    probeTimeoutMs: env.BERTH_PROBE_TIMEOUT_MS,
    consoleDir: env.BERTH_CONSOLE_DIR,
    fileMaxBytes: env.BERTH_FILE_MAX_BYTES,
    blobDir: env.BERTH_BLOB_DIR,
    workspaceTimeoutMs: env.BERTH_WORKSPACE_TIMEOUT_MS,
    allowHostNetwork: env.BERTH_ALLOW_HOST_NETWORK,
    ackWaitMs: env.BERTH_NATS_ACK_WAIT_MS,
    maxDeliver: env.BERTH_NATS_MAX_DELIVER,
    streamReplicas: env.BERTH_NATS_STREAM_REPLICAS,
    webhooks: {
      targets: { allowPrivateTargets: env.BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS === 'true' || env.BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS === '1' },
      timeoutMs: env.BERTH_WEBHOOK_TIMEOUT_MS,
      tickMs: env.BERTH_WEBHOOK_TICK_MS,
      leaseMs: env.BERTH_WEBHOOK_LEASE_MS,
      batchSize: env.BERTH_WEBHOOK_BATCH,
      retentionMs: env.BERTH_WEBHOOK_RETENTION_DAYS * 24 * HOUR_MS,
      policy: {
        ...defaultDeliveryPolicy,
        retryDelaysMs: env.BERTH_WEBHOOK_RETRY_DELAYS_MS,
        maxAgeMs: Math.round(env.BERTH_WEBHOOK_MAX_AGE_HOURS * HOUR_MS),
        disableAfterMs: Math.round(env.BERTH_WEBHOOK_DISABLE_AFTER_HOURS * HOUR_MS),
      },
    },
    vaultRefresh: {
      policy: { marginMs: env.BERTH_VAULT_REFRESH_MARGIN_MS, lifetimeShare: env.BERTH_VAULT_REFRESH_LIFETIME_SHARE, retryDelaysMs: env.BERTH_VAULT_REFRESH_RETRY_DELAYS_MS },
      timeoutMs: env.BERTH_VAULT_REFRESH_TIMEOUT_MS,
      tickMs: env.BERTH_VAULT_REFRESH_TICK_MS,
      leaseMs: env.BERTH_VAULT_REFRESH_LEASE_MS,
      batchSize: env.BERTH_VAULT_REFRESH_BATCH,
    },
  }));
