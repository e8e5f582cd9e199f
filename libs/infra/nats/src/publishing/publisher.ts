import type { JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { encodeJson } from '../connection/codec';

export type PublishOptions = Readonly<{
  /** Deduplication id: a repeat inside the stream's duplicate window is dropped by the broker. */
  msgId?: string;
  headers?: Readonly<Record<string, string>>;
}>;

export type PublishReceipt = Readonly<{ stream: string; seq: number; duplicate: boolean }>;

/** Publishes to JetStream and waits for the broker's PubAck: a resolved publish is stored. */
export class JetStreamPublisher {
  constructor(private readonly js: JetStreamClient) {}

  async publish(subject: string, payload: unknown, options: PublishOptions = {}): Promise<PublishReceipt> {
    const data = payload instanceof Uint8Array ? payload : encodeJson(payload);
    const hdrs = options.headers && Object.keys(options.headers).length > 0 ? natsHeaders() : undefined;
    for (const [key, value] of Object.entries(options.headers ?? {})) hdrs?.set(key, value);
    const ack = await this.js.publish(subject, data, { msgID: options.msgId, headers: hdrs });
    return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
  }
}
