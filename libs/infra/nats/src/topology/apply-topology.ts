import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  JetStreamApiError,
  ReplayPolicy,
  RetentionPolicy,
  StorageType,
  type ConsumerConfig,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import type { ConsumerDeclaration, OwnerStreamDeclaration, StreamDeclaration, Topology } from './topology';

const STREAM_NOT_FOUND = 10059;
const CONSUMER_NOT_FOUND = 10014;
/** "replicas > 1 not supported in non-clustered mode", "insufficient resources", "no suitable peers for placement". */
const CANNOT_PLACE_REPLICAS = new Set([10074, 10023, 10005]);

const isApiError = (e: unknown, code: number): boolean => e instanceof JetStreamApiError && e.code === code;

const retention = { workqueue: RetentionPolicy.Workqueue, limits: RetentionPolicy.Limits, interest: RetentionPolicy.Interest };

function toStreamConfig(s: StreamDeclaration): Partial<StreamConfig> & { name: string } {
  return {
    name: s.name,
    subjects: [...s.subjects],
    retention: retention[s.retention],
    storage: s.storage === 'file' ? StorageType.File : StorageType.Memory,
    num_replicas: s.num_replicas,
    discard: s.discard === 'old' ? DiscardPolicy.Old : DiscardPolicy.New,
    duplicate_window: s.duplicate_window,
    max_age: s.max_age,
    allow_direct: s.allow_direct,
  };
}

function toConsumerConfig(c: ConsumerDeclaration): Partial<ConsumerConfig> {
  const { filter_subjects, filter_subject, backoff, ...rest } = c.config;
  return {
    ...rest,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    replay_policy: ReplayPolicy.Instant,
    backoff: [...backoff],
    ...(filter_subject ? { filter_subject } : {}),
    ...(filter_subjects ? { filter_subjects: [...filter_subjects] } : {}),
  };
}

export type ApplyOptions = Readonly<{
  /** How long a consumer waits for its stream (declared by another service) before failing. */
  streamWaitMs?: number;
}>;

/**
 * Creates what is missing and updates what exists, so every service can apply its part of the
 * topology at start without coordination (`serviceTopology`): a consumer whose stream another
 * service has not declared yet waits for it. A change NATS cannot make in place (e.g. retention)
 * fails loudly.
 */
export async function applyTopology(jsm: JetStreamManager, topology: Topology, options: ApplyOptions = {}): Promise<void> {
  for (const stream of topology.streams) {
    const config = toStreamConfig(stream);
    try {
      try {
        await jsm.streams.info(stream.name);
        await jsm.streams.update(stream.name, config);
      } catch (e) {
        if (!isApiError(e, STREAM_NOT_FOUND)) throw e;
        await jsm.streams.add(config);
      }
    } catch (e) {
      if (e instanceof JetStreamApiError && CANNOT_PLACE_REPLICAS.has(e.code) && stream.num_replicas > 1) {
        throw new Error(
          `stream ${stream.name} with ${stream.num_replicas} replicas: ${e.message}. BERTH_NATS_STREAM_REPLICAS=${stream.num_replicas} needs a NATS cluster of at least ${stream.num_replicas} JetStream servers (docs/scale-out.md); use 1 on a single nats-server`,
        );
      }
      throw e;
    }
  }
  for (const consumer of topology.consumers) {
    await waitForStream(jsm, consumer.stream, options.streamWaitMs ?? 60_000);
    const config = toConsumerConfig(consumer);
    try {
      await jsm.consumers.info(consumer.stream, consumer.config.durable_name);
      await jsm.consumers.update(consumer.stream, consumer.config.durable_name, config);
    } catch (e) {
      if (!isApiError(e, CONSUMER_NOT_FOUND)) throw e;
      await jsm.consumers.add(consumer.stream, config);
    }
  }
}

async function waitForStream(jsm: JetStreamManager, stream: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await jsm.streams.info(stream);
      return;
    } catch (e) {
      if (!isApiError(e, STREAM_NOT_FOUND)) throw e;
      if (Date.now() > deadline) throw new Error(`stream ${stream} does not exist after ${timeoutMs} ms: the session-kernel declares it; is it running?`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** Creates an owner's stream when it is missing (an existing one keeps its position in its source). */
export async function applyOwnerStream(jsm: JetStreamManager, stream: OwnerStreamDeclaration): Promise<void> {
  try {
    await jsm.streams.info(stream.name);
  } catch (e) {
    if (!isApiError(e, STREAM_NOT_FOUND)) throw e;
    await jsm.streams.add({
      name: stream.name,
      retention: retention[stream.retention],
      storage: StorageType.File,
      num_replicas: stream.num_replicas,
      discard: DiscardPolicy.Old,
      max_age: stream.max_age,
      sources: stream.sources.map((s) => ({ name: s.name, filter_subject: s.filter_subject, external: { api: s.external.api, deliver: s.external.deliver } })),
    });
  }
}
