import { z } from 'zod';

/** Labelled places where chaos tests make the process die with SIGKILL. */
export const CRASH_POINTS = ['after-commit-before-publish', 'after-publish-before-mark', 'after-publish-before-ack'] as const;
export type CrashPoint = (typeof CRASH_POINTS)[number];

const int = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const KernelConfigSchema = z
  .object({
    NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
    /** This service's NATS user (`nats-init` writes one per service); unset only for a server without auth. */
    NATS_CREDS: z.string().min(1).optional(),
    BERTH_STORE_URL: z.string().min(1).default('sqlite:./.berth/berth.db'),
    BERTH_CRASH_POINT: z.enum(CRASH_POINTS).optional(),
    BERTH_KERNEL_CONCURRENCY: int(16),
    BERTH_NATS_ACK_WAIT_MS: int(30_000),
    BERTH_NATS_MAX_DELIVER: int(5),
    /** Copies of each JetStream stream the kernel declares: 1 on one nats-server, 3 on a three-node cluster. */
    BERTH_NATS_STREAM_REPLICAS: z.coerce.number().int().min(1).max(5).default(1),
    BERTH_RETRY_BASE_MS: int(500),
    BERTH_OUTBOX_RELAY_MS: int(1_000),
  })
  .transform((env) => ({
    natsUrl: env.NATS_URL,
    natsCreds: env.NATS_CREDS ?? null,
    storeUrl: env.BERTH_STORE_URL,
    crashPoint: env.BERTH_CRASH_POINT ?? null,
    concurrency: env.BERTH_KERNEL_CONCURRENCY,
    ackWaitMs: env.BERTH_NATS_ACK_WAIT_MS,
    maxDeliver: env.BERTH_NATS_MAX_DELIVER,
    streamReplicas: env.BERTH_NATS_STREAM_REPLICAS,
    retryBaseMs: env.BERTH_RETRY_BASE_MS,
    relayIntervalMs: env.BERTH_OUTBOX_RELAY_MS,
  }));
export type KernelConfig = z.infer<typeof KernelConfigSchema>;
