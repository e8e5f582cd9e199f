import { parseSessionSubject } from '@berth/contracts';
import { ValidationError } from '@berth/core';
import {
  ConsumerRunner,
  isHandlerResult,
  JetStreamPublisher,
  type DeadLetter,
  type HandlerResult,
  type InboundMessage,
  type ConsumerObserver,
  type RetryPolicy,
} from '@berth/nats';
import type { Logger } from '@berth/ports';
import { jetstream } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { Server, type CustomTransportStrategy } from '@nestjs/microservices';
import { isObservable, lastValueFrom } from 'rxjs';
import { JetStreamContext } from './jetstream.context';

export type JetStreamTransportOptions = Readonly<{
  connection: NatsConnection;
  stream: string;
  consumer: string;
  /** The consumer's `max_deliver` (from the topology declaration). */
  maxDeliver: number;
  concurrency?: number;
  retry?: RetryPolicy;
  /** The pattern a message is routed by; the last subject token (its command or event type) by default. */
  patternOf?: (message: InboundMessage) => string;
  /** A message no handler claims: skipped (ack) by default, or dead-lettered as bad input. */
  unhandled?: 'ack' | 'dead-letter';
  onDeadLetter?: (deadLetter: DeadLetter) => Promise<void>;
  log: Logger;
  /** Told about every delivery and its answer (metrics). */
  observer?: ConsumerObserver;
}>;

const typeOfSubject = (m: InboundMessage): string => parseSessionSubject(m.subject)?.type ?? m.subject;

/**
 * A Nest transport over one JetStream durable pull consumer. Handlers are ordinary
 * `@EventPattern(<type>)` methods; the value they return (a HandlerResult, or nothing = ack) or the
 * error they throw decides ack / nak / term / dead-letter in the ConsumerRunner. Errors reach this
 * strategy intact only with `JetStreamErrorsFilter` registered (see `createJetStreamMicroservice`).
 */
export class JetStreamTransport extends Server implements CustomTransportStrategy {
  override readonly propagatesEventHandlerErrors = true;
  private runner: ConsumerRunner | null = null;

  constructor(private readonly options: JetStreamTransportOptions) {
    super();
  }

  listen(callback: (error?: unknown) => void): void {
    const js = jetstream(this.options.connection);
    this.runner = new ConsumerRunner({
      js,
      stream: this.options.stream,
      consumer: this.options.consumer,
      maxDeliver: this.options.maxDeliver,
      concurrency: this.options.concurrency,
      retry: this.options.retry,
      publisher: new JetStreamPublisher(js),
      onDeadLetter: this.options.onDeadLetter,
      handler: (m) => this.dispatch(m),
      log: this.options.log,
      observer: this.options.observer,
    });
    this.runner.start().then(() => callback(), callback);
  }

  /** The consumer's backlog (metrics read it at scrape time); null before listen. */
  pending(): Promise<Readonly<{ pending: number; ackPending: number }> | null> {
    return this.runner?.pending() ?? Promise.resolve(null);
  }

  /** Stops pulling and waits for the messages in flight. */
  async close(): Promise<void> {
    await this.runner?.stop();
    this.runner = null;
  }

  on(): void {
    throw new Error('JetStreamTransport has no transport events to subscribe to');
  }

  unwrap<T>(): T {
    return this.options.connection as T;
  }

  private async dispatch(message: InboundMessage): Promise<HandlerResult> {
    const pattern = (this.options.patternOf ?? typeOfSubject)(message);
    const handler = this.getHandlerByPattern(pattern);
    if (!handler) {
      if (this.options.unhandled === 'dead-letter') throw new ValidationError(`no handler for message type ${JSON.stringify(pattern)}`, 'type');
      return { type: 'ack' };
    }
    const returned = await handler(message.body, new JetStreamContext([message]));
    const result: unknown = isObservable(returned) ? await lastValueFrom(returned, { defaultValue: undefined }) : returned;
    return isHandlerResult(result) ? result : { type: 'ack' };
  }
}
