import { parseSessionSubject } from '@berth/contracts';
import { inSpan, SpanKind, withTraceHeaders } from '@berth/telemetry';
import type { JetStreamClient } from '@nats-io/jetstream';
import { headers as natsHeaders } from '@nats-io/nats-core';
import { encodeJson } from '../connection/codec';

export type PublishOptions = Readonly<{
  /** Deduplication id: a repeat inside the stream's duplicate window is dropped by the broker. */
  msgId?: string;
  headers?: Readonly<Record<string, string>>;
}>;

export type PublishReceipt = Readonly<{ stream: string; seq: number; duplicate: boolean }>;

/**
 * Publishes to JetStream and waits for the broker's PubAck: a resolved publish is stored. Each
 * publish is a PRODUCER span, and its trace context travels in the message's `traceparent`
 * header, so the consumer's span joins the sender's trace.
 */
export class JetStreamPublisher {
  constructor(private readonly js: JetStreamClient) {}

  publish(subject: string, payload: unknown, options: PublishOptions = {}): Promise<PublishReceipt> {
    const parsed = parseSessionSubject(subject);
    return inSpan(
      `publish ${parsed?.type ?? subject}`,
      { kind: SpanKind.PRODUCER, attributes: { 'messaging.system': 'nats', 'messaging.destination.name': subject, ...(parsed ? { 'berth.session_id': parsed.sessionId } : {}) } },
      async () => {
        const data = payload instanceof Uint8Array ? payload : encodeJson(payload);
        const hdrs = natsHeaders();
        for (const [key, value] of Object.entries(withTraceHeaders(options.headers))) hdrs.set(key, value);
        const ack = await this.js.publish(subject, data, { msgID: options.msgId, headers: hdrs });
        return { stream: ack.stream, seq: ack.seq, duplicate: ack.duplicate };
      },
    );
  }
}
