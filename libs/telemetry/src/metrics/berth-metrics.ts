import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every metric Berth exports, by the service that records it. Names and labels are a contract
 * (the Grafana dashboard in deploy/grafana and operators' alerts read them): add, never rename.
 * A service creates only its own groups on its registry, so its /metrics shows what it measures.
 */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const TURN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800, 3600];

/** One process's registry, with Node's process metrics (memory, CPU, event-loop lag) and a `service` label on everything. */
export function serviceRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

export const httpMetrics = (registry: Registry) => ({
  requestDuration: new Histogram({
    name: 'berth_http_request_duration_seconds',
    help: 'HTTP requests by route template, method and status, until the response ended (an SSE stream counts for its whole life)',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  }),
  sseClients: new Gauge({ name: 'berth_sse_clients', help: 'Open SSE event streams', registers: [registry] }),
});

/** What a consumer reports per delivery (the shape the NATS consumer runner calls). */
export type ConsumerAnswer = 'ack' | 'retry' | 'term' | 'working' | 'dead_letter';
export type PendingCounts = Readonly<{ pending: number; ackPending: number }>;

export function consumerMetrics(registry: Registry) {
  const delivered = new Counter({
    name: 'berth_consumer_deliveries_total',
    help: 'Messages delivered to a JetStream consumer, by whether it was a redelivery',
    labelNames: ['stream', 'consumer', 'redelivered'] as const,
    registers: [registry],
  });
  const answered = new Counter({
    name: 'berth_consumer_results_total',
    help: 'How deliveries were answered: ack, retry (nak), term, working, dead_letter',
    labelNames: ['stream', 'consumer', 'result'] as const,
    registers: [registry],
  });
  const sources = new Map<string, Readonly<{ stream: string; consumer: string; read: () => Promise<PendingCounts | null> }>>();
  new Gauge({
    name: 'berth_consumer_pending',
    help: 'Messages of the stream not yet delivered to the consumer (kind=pending, num_pending) and delivered but not acknowledged (kind=ack_pending), read from the broker at scrape time',
    labelNames: ['stream', 'consumer', 'kind'] as const,
    registers: [registry],
    async collect() {
      for (const { stream, consumer, read } of sources.values()) {
        const counts = await read().catch(() => null);
        if (counts === null) continue;
        this.set({ stream, consumer, kind: 'pending' }, counts.pending);
        this.set({ stream, consumer, kind: 'ack_pending' }, counts.ackPending);
      }
    },
  });
  return {
    /** The observer one consumer runner reports its deliveries to. */
    observer: (stream: string, consumer: string) => ({
      delivered: (redelivered: boolean) => delivered.inc({ stream, consumer, redelivered: String(redelivered) }),
      answered: (result: ConsumerAnswer) => answered.inc({ stream, consumer, result }),
    }),
    /** Reads the consumer's backlog from the broker at every scrape. */
    watch: (stream: string, consumer: string, read: () => Promise<PendingCounts | null>) => void sources.set(`${stream}/${consumer}`, { stream, consumer, read }),
  };
}

export const kernelMetrics = (registry: Registry) => ({
  commands: new Counter({
    name: 'berth_commands_handled_total',
    help: 'Commands the session-kernel handled, by type and outcome: applied, noop, duplicate, refused, failed',
    labelNames: ['type', 'outcome'] as const,
    registers: [registry],
  }),
  decideSeconds: new Histogram({ name: 'berth_kernel_decide_duration_seconds', help: 'Time in the pure decide of one command', buckets: LATENCY_BUCKETS, registers: [registry] }),
  commitSeconds: new Histogram({
    name: 'berth_kernel_commit_duration_seconds',
    help: 'Time to commit one decided command (events, snapshot, read model) to the store',
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  }),
  eventsPublished: new Counter({ name: 'berth_events_published_total', help: 'Session events published to SESSION_EVT, by type', labelNames: ['type'] as const, registers: [registry] }),
});

/** What the sandbox-manager's gauges read at scrape time. */
export type SandboxGaugeSources = Readonly<{
  turnsRunning: () => number;
  /** Counts of this installation's containers by state (warm, bound, exited). */
  sandboxes: () => Promise<Readonly<Record<string, number>>>;
}>;

export const sandboxMetrics = (registry: Registry, sources: SandboxGaugeSources) => ({
  turnsRunning: new Gauge({
    name: 'berth_turns_running',
    help: 'Harness turns this sandbox-manager runs that have not settled for their user yet',
    registers: [registry],
    collect() {
      this.set(sources.turnsRunning());
    },
  }),
  turnSeconds: new Histogram({
    name: 'berth_turn_duration_seconds',
    help: 'Harness turns from start (or reattach) to settled for the user (terminal line, or exit when none), by harness',
    labelNames: ['harness'] as const,
    buckets: TURN_BUCKETS,
    registers: [registry],
  }),
  sandboxes: new Gauge({
    name: 'berth_sandboxes',
    help: "This installation's sandbox containers by state, read from the engine at scrape time: warm (in a pool), bound (a session's), exited",
    labelNames: ['state'] as const,
    registers: [registry],
    async collect() {
      const counts = await sources.sandboxes().catch(() => null);
      if (counts === null) return;
      this.reset();
      for (const state of ['warm', 'bound', 'exited']) this.set({ state }, counts[state] ?? 0);
    },
  }),
  warmPoolClaims: new Counter({
    name: 'berth_warm_pool_claims_total',
    help: 'Sandbox starts of environments with a warm pool: hit (claimed a warm container) or miss (started cold)',
    labelNames: ['result'] as const,
    registers: [registry],
  }),
});

/** The sandbox egress proxy's figures: `egressMetrics(registry).denials.inc({ reason })` where it refuses a request. */
export const egressMetrics = (registry: Registry) => ({
  denials: new Counter({
    name: 'berth_egress_denials_total',
    help: 'Requests from sandboxes the egress proxy refused, by reason (e.g. host_not_allowed)',
    labelNames: ['reason'] as const,
    registers: [registry],
  }),
});

/** The webhook delivery worker's figures (in the gateway). */
export const webhookMetrics = (registry: Registry) => ({
  planned: new Counter({
    name: 'berth_webhook_deliveries_planned_total',
    help: 'Webhook deliveries written to the outbox (one per event and subscribed endpoint)',
    registers: [registry],
  }),
  attempts: new Counter({
    name: 'berth_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome (delivered, failed)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  }),
  expired: new Counter({
    name: 'berth_webhook_deliveries_expired_total',
    help: 'Webhook deliveries failed because they were not delivered within the delivery policy’s maximum age',
    registers: [registry],
  }),
  disabled: new Counter({
    name: 'berth_webhook_endpoints_disabled_total',
    help: 'Webhook endpoints Berth disabled, by reason (consecutive_failures: failing for the policy’s disable time, redirect, target_not_allowed)',
    labelNames: ['reason'] as const,
    registers: [registry],
  }),
});

/** The vault credential refresher's figures (in the gateway holding its lease). */
export const vaultMetrics = (registry: Registry) => ({
  refreshes: new Counter({
    name: 'berth_vault_refreshes_total',
    help: 'OAuth token refreshes of mcp_oauth vault credentials, by outcome (refreshed, retrying, failed; superseded: the credential changed meanwhile)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  }),
});
export type VaultMetrics = ReturnType<typeof vaultMetrics>;

export const reconcilerMetrics = (registry: Registry) => ({
  verdicts: new Counter({
    name: 'berth_reconciler_verdicts_total',
    help: 'Commands the turn-reconciler sent to settle a turn, by command and reason (FailTurn reason, RecoverTurn method)',
    labelNames: ['command', 'reason'] as const,
    registers: [registry],
  }),
  effects: new Counter({
    name: 'berth_reconciler_effects_total',
    help: 'Effects the turn-reconciler asked of the sandbox-manager (probe, reattach, …), by outcome',
    labelNames: ['effect', 'outcome'] as const,
    registers: [registry],
  }),
});

export type HttpMetrics = ReturnType<typeof httpMetrics>;
export type ConsumerMetrics = ReturnType<typeof consumerMetrics>;
export type KernelMetrics = ReturnType<typeof kernelMetrics>;
export type SandboxMetrics = ReturnType<typeof sandboxMetrics>;
export type ReconcilerMetrics = ReturnType<typeof reconcilerMetrics>;
export type EgressMetrics = ReturnType<typeof egressMetrics>;
export type WebhookMetrics = ReturnType<typeof webhookMetrics>;

/** Seconds since a `process.hrtime.bigint()` reading. */
export const secondsSince = (start: bigint): number => Number(process.hrtime.bigint() - start) / 1e9;
