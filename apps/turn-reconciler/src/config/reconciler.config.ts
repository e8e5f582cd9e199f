import { z } from 'zod';

/** Labelled places where chaos tests make the reconciler die with SIGKILL. */
export const RECONCILER_CRASH_POINTS = ['before-command', 'after-command'] as const;
export type ReconcilerCrashPoint = (typeof RECONCILER_CRASH_POINTS)[number];

const int = (fallback: number) => z.coerce.number().int().positive().default(fallback);

export const ReconcilerConfigSchema = z
  .object({
    NATS_URL: z.string().min(1).default('nats://127.0.0.1:4222'),
    /** This service's NATS user (`nats-init` writes one per service); unset only for a server without auth. */
    NATS_CREDS: z.string().min(1).optional(),
    BERTH_STORE_URL: z.string().min(1).default('sqlite:./.berth/berth.db'),
    BERTH_CRASH_POINT: z.enum(RECONCILER_CRASH_POINTS).optional(),
    BERTH_NATS_ACK_WAIT_MS: int(30_000),
    BERTH_NATS_MAX_DELIVER: int(5),
    BERTH_RECONCILE_SWEEP_MS: int(1_000),
    BERTH_RECONCILE_PROBE_AFTER_MS: int(5_000),
    BERTH_RECONCILE_RETRY_MS: int(1_000),
    BERTH_RECONCILE_PENDING_TIMEOUT_MS: int(5_000),
    BERTH_RECONCILE_MAX_ATTEMPTS: int(5),
    BERTH_RECONCILE_STALL_MS: int(10 * 60_000),
    BERTH_RECONCILE_STARTUP_GRACE_MS: int(60_000),
    /** How long no sandbox-manager may answer before an open turn fails (a restart or rollout must not fail turns). */
    BERTH_RECONCILE_UNANSWERED_MS: int(10 * 60_000),
    BERTH_PROBE_TIMEOUT_MS: int(2_000),
    BERTH_EFFECT_TIMEOUT_MS: int(4_000),
    /** How long the active replica's lease lasts unrenewed (a standby takes over at most this long after it dies). */
    BERTH_RECONCILER_LEASE_MS: int(10_000),
    /** This replica's identity among the reconcilers sharing the store; a restart under the same id takes its lease back at once. */
    BERTH_INSTANCE_ID: z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/).optional(),
  })
  .refine((env) => env.BERTH_RECONCILE_PENDING_TIMEOUT_MS > Math.max(env.BERTH_PROBE_TIMEOUT_MS, env.BERTH_EFFECT_TIMEOUT_MS), {
    message: 'must exceed BERTH_PROBE_TIMEOUT_MS and BERTH_EFFECT_TIMEOUT_MS (an effect still running must not count as lost)',
    path: ['BERTH_RECONCILE_PENDING_TIMEOUT_MS'],
  })
  .transform((env) => ({
    natsUrl: env.NATS_URL,
    natsCreds: env.NATS_CREDS ?? null,
    storeUrl: env.BERTH_STORE_URL,
    crashPoint: env.BERTH_CRASH_POINT ?? null,
    ackWaitMs: env.BERTH_NATS_ACK_WAIT_MS,
    maxDeliver: env.BERTH_NATS_MAX_DELIVER,
    sweepIntervalMs: env.BERTH_RECONCILE_SWEEP_MS,
    probeTimeoutMs: env.BERTH_PROBE_TIMEOUT_MS,
    effectTimeoutMs: env.BERTH_EFFECT_TIMEOUT_MS,
    leaseTtlMs: env.BERTH_RECONCILER_LEASE_MS,
    instanceId: env.BERTH_INSTANCE_ID ?? null,
    policy: {
      probeAfterMs: env.BERTH_RECONCILE_PROBE_AFTER_MS,
      retryAfterMs: env.BERTH_RECONCILE_RETRY_MS,
      pendingTimeoutMs: env.BERTH_RECONCILE_PENDING_TIMEOUT_MS,
      maxAttempts: env.BERTH_RECONCILE_MAX_ATTEMPTS,
      stallMs: env.BERTH_RECONCILE_STALL_MS,
      startupGraceMs: env.BERTH_RECONCILE_STARTUP_GRACE_MS,
      unansweredMs: env.BERTH_RECONCILE_UNANSWERED_MS,
    },
  }));
export type ReconcilerConfig = z.infer<typeof ReconcilerConfigSchema>;
