import { natsServers, type EventMessage, type PublicEvent } from '@berth/contracts';
import { DeliverPolicy, jetstream, type ConsumerMessages } from '@nats-io/jetstream';
import { credsAuthenticator, type NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';

/** What `POST /v1/nats_credentials` hands back, enough to connect (the `creds` and `connection` fields). */
export type SubscriberCredential = Readonly<{
  creds: string;
  connection: Readonly<{ servers: string; inbox_prefix: string; stream: string }>;
}>;

/** One event of the owner's sessions, in the owner's stream order. */
export type ReceivedEvent = Readonly<{
  /** Position in the owner's stream: store it after handling the event, resume with `events({ after })`. */
  position: number;
  sessionId: string;
  /** The event's per-session sequence (the SSE `id:` and the `<session>:<seq>` message id). */
  seq: number;
  /** The event exactly as `GET /v1/sessions/{id}/events` renders it. */
  event: PublicEvent;
}>;

export class MalformedEventError extends Error {
  constructor(
    readonly position: number,
    message: string,
  ) {
    super(`event at position ${position}: ${message}`);
  }
}

/** Turns one stored message into a `ReceivedEvent`; pure. */
export function parseEventMessage(position: number, body: unknown): ReceivedEvent {
  const message = body as Partial<EventMessage> | null;
  const event = message?.public;
  if (typeof message?.session_id !== 'string' || typeof message.seq !== 'number') throw new MalformedEventError(position, 'no session_id and seq');
  if (typeof event?.id !== 'string' || typeof event.type !== 'string' || typeof event.processed_at !== 'string') {
    throw new MalformedEventError(position, 'no public event (id, type, processed_at)');
  }
  return { position, sessionId: message.session_id, seq: message.seq, event };
}

export type EventsOptions = Readonly<{
  /** Resume after this stream position (the last one handled); 0 or absent starts at the oldest event kept. */
  after?: number;
}>;

/**
 * Subscribes to one owner's session events with a credential minted by the gateway: an ordered
 * consumer on the owner's stream (created and re-created by the client, nothing left on the
 * server), starting after the position the caller stored. Events come one at a time, in order,
 * each once; the caller stores `position` after handling one, and a restart with `after` resumes
 * with no gap and no repeat.
 */
export class BerthEventSubscriber {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly stream: string,
  ) {}

  static async connect(credential: SubscriberCredential, options: Readonly<{ name?: string }> = {}): Promise<BerthEventSubscriber> {
    const nc = await connect({
      servers: natsServers(credential.connection.servers),
      name: options.name ?? 'berth-subscriber',
      // The credential may subscribe only under its owner's inbox prefix.
      inboxPrefix: credential.connection.inbox_prefix,
      authenticator: credsAuthenticator(new TextEncoder().encode(credential.creds)),
      maxReconnectAttempts: -1,
    });
    return new BerthEventSubscriber(nc, credential.connection.stream);
  }

  /** Yields the owner's events after `after`, then waits for new ones, until the loop breaks or `close()`. */
  async *events(options: EventsOptions = {}): AsyncGenerator<ReceivedEvent> {
    const after = options.after ?? 0;
    const consumer = await jetstream(this.nc).consumers.get(
      this.stream,
      after > 0 ? { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: after + 1 } : { deliver_policy: DeliverPolicy.All },
    );
    const messages: ConsumerMessages = await consumer.consume();
    try {
      for await (const m of messages) yield parseEventMessage(m.seq, m.json());
    } finally {
      await messages.close();
    }
  }

  /** Resolves when the connection ends: with an error when the server refused it (e.g. the credential was revoked). */
  closed(): Promise<void | Error> {
    return this.nc.closed();
  }

  async close(): Promise<void> {
    if (!this.nc.isClosed()) await this.nc.close();
  }
}
