import { Consumers, Streams, Subjects, type ConsumerName } from '@berth/contracts';
import { SERVICE_USERS, type ServiceName, type ServiceUser } from '../auth/permissions';

/** Durations in JetStream configs are nanoseconds. */
const nanos = (ms: number): number => ms * 1_000_000;

/** A stream as NATS configures it (the same JSON `nats stream add --config` accepts). */
export type StreamDeclaration = Readonly<{
  name: string;
  subjects: readonly string[];
  retention: 'workqueue' | 'limits' | 'interest';
  storage: 'file' | 'memory';
  num_replicas: number;
  discard: 'old' | 'new';
  duplicate_window: number;
  max_age: number;
  allow_direct: boolean;
}>;

/** A durable pull consumer as NATS configures it (`nats consumer add --config`). */
export type ConsumerDeclaration = Readonly<{
  stream: string;
  config: Readonly<{
    durable_name: ConsumerName;
    description: string;
    ack_policy: 'explicit';
    deliver_policy: 'all';
    replay_policy: 'instant';
    ack_wait: number;
    max_deliver: number;
    backoff: readonly number[];
    max_ack_pending: number;
    filter_subjects?: readonly string[];
    filter_subject?: string;
  }>;
}>;

export type Topology = Readonly<{ streams: readonly StreamDeclaration[]; consumers: readonly ConsumerDeclaration[] }>;

/** Redelivery tuning of one consumer; tests shorten it, production keeps the defaults. */
export type DeliveryTuning = Readonly<{
  /** Time a delivery may stay unacknowledged before the server redelivers it (first attempt). */
  ackWaitMs: number;
  /** Deliveries before a failing message is dead-lettered. Bounded: never an infinite loop. */
  maxDeliver: number;
}>;

export const defaultDeliveryTuning: DeliveryTuning = { ackWaitMs: 30_000, maxDeliver: 5 };

export type TopologyOptions = Readonly<{
  tuning?: Partial<DeliveryTuning>;
  /** Event subjects each reactor listens to; every event by default. (The manager's turns consumer takes `TurnStarted` only.) */
  filters?: Readonly<Partial<Record<'sandboxManagerControl' | 'turnReconciler', readonly string[]>>>;
  /**
   * Copies of each stream (`BERTH_NATS_STREAM_REPLICAS`): 1 on a single nats-server, 3 on a
   * three-node cluster (a stream then survives the loss of one node). Consumers inherit it.
   */
  replicas?: number;
}>;

/**
 * Ack-timeout redelivery schedule: the first entry is the ack wait (the server uses it as such when
 * a backoff is set), later ones stretch out. It applies only to deliveries that were never
 * answered (a crashed worker); handler failures nak with their own delay.
 */
function ackTimeoutBackoff(t: DeliveryTuning): number[] {
  const steps = Math.max(1, t.maxDeliver - 1);
  return Array.from({ length: steps }, (_, i) => nanos(t.ackWaitMs * 2 ** i));
}

const DAY_MS = 24 * 60 * 60 * 1000;

/** One file-backed stream; publishes are deduplicated by `Nats-Msg-Id` for 2 minutes. */
const stream = (
  name: string,
  subject: string,
  retention: StreamDeclaration['retention'],
  maxAgeMs: number,
  allowDirect: boolean,
  replicas: number,
): StreamDeclaration => ({
  name,
  subjects: [subject],
  retention,
  storage: 'file',
  num_replicas: replicas,
  discard: 'old',
  duplicate_window: nanos(2 * 60 * 1000),
  max_age: nanos(maxAgeMs),
  allow_direct: allowDirect,
});

export function berthTopology(options: TopologyOptions = {}): Topology {
  const tuning: DeliveryTuning = { ...defaultDeliveryTuning, ...options.tuning };
  const replicas = options.replicas ?? 1;
  const consumer = (
    stream: string,
    name: ConsumerName,
    description: string,
    filters: readonly string[],
  ): ConsumerDeclaration => ({
    stream,
    config: {
      durable_name: name,
      description,
      ack_policy: 'explicit',
      deliver_policy: 'all',
      replay_policy: 'instant',
      ack_wait: nanos(tuning.ackWaitMs),
      max_deliver: tuning.maxDeliver,
      backoff: ackTimeoutBackoff(tuning),
      max_ack_pending: 1_000,
      // nats-server 2.9 accepts one filter subject; several need 2.10 `filter_subjects`.
      ...(filters.length === 1 ? { filter_subject: filters[0] } : { filter_subjects: filters }),
    },
  });

  return {
    streams: [
      stream(Streams.commands, Subjects.allCommands, 'workqueue', 7 * DAY_MS, false, replicas),
      stream(Streams.events, Subjects.allEvents, 'limits', 30 * DAY_MS, true, replicas),
      stream(Streams.deadLetters, Subjects.allDeadLetters, 'limits', 30 * DAY_MS, false, replicas),
    ],
    consumers: [
      consumer(Streams.commands, Consumers.kernel, 'Session kernel: the only writer of session state', [Subjects.allCommands]),
      consumer(
        Streams.events,
        Consumers.sandboxManagerControl,
        'Sandbox manager control: sandbox requests, interrupts, tool confirmations, terminate and delete (it skips TurnStarted)',
        options.filters?.sandboxManagerControl ?? [Subjects.allEvents],
      ),
      // One filter subject: nats-server 2.9 takes no more. Its deliveries stay in flight while their turns run.
      consumer(Streams.events, Consumers.sandboxManagerTurns, 'Sandbox manager turns: runs each started turn to its end', [Subjects.eventsOfType('TurnStarted')]),
      consumer(
        Streams.events,
        Consumers.turnReconciler,
        'Turn reconciler: drives stalled turns to completed or failed',
        options.filters?.turnReconciler ?? [Subjects.allEvents],
      ),
      consumer(Streams.events, Consumers.webhooks, 'Webhooks: session events into the webhook delivery outbox', [Subjects.allEvents]),
    ],
  };
}

/** The declaration of one consumer, e.g. to read its `max_deliver` in the runner. */
export function consumerDeclaration(topology: Topology, name: ConsumerName): ConsumerDeclaration {
  const found = topology.consumers.find((c) => c.config.durable_name === name);
  if (!found) throw new Error(`consumer ${name} is not declared in the topology`);
  return found;
}

/**
 * The part of the topology one service declares at start, from its entry in `SERVICE_USERS`: the
 * kernel its streams and consumer, a reactor only its own consumer (its user may not touch streams).
 */
export function serviceTopology(topology: Topology, service: ServiceName): Topology {
  const user: ServiceUser = SERVICE_USERS[service];
  const own = new Set(user.consumes.map((c) => `${c.stream}/${c.consumer}`));
  return {
    streams: user.managesStreams ? topology.streams : [],
    consumers: topology.consumers.filter((c) => own.has(`${c.stream}/${c.config.durable_name}`)),
  };
}

/**
 * One owner's events in the subscribers' account: a stream with no subjects of its own, sourced
 * from SESSION_EVT through `BERTH_API_PREFIX` with the owner's filter, so it starts with the owner's
 * history still in SESSION_EVT and then follows it. Subscribers read it through their own consumers.
 */
export type OwnerStreamDeclaration = Readonly<{
  name: string;
  retention: 'limits';
  storage: 'file';
  num_replicas: number;
  discard: 'old';
  max_age: number;
  sources: readonly Readonly<{ name: string; filter_subject: string; external: Readonly<{ api: string; deliver: string }> }>[];
}>;

export function ownerEventStream(ownerId: string, apiPrefix: string, replicas = 1): OwnerStreamDeclaration {
  return {
    name: Streams.ownerEvents(ownerId),
    retention: 'limits',
    storage: 'file',
    num_replicas: replicas,
    discard: 'old',
    max_age: nanos(30 * DAY_MS),
    sources: [{ name: Streams.events, filter_subject: Subjects.ownerEvents(ownerId), external: { api: apiPrefix, deliver: Subjects.ownerDelivery(ownerId) } }],
  };
}
