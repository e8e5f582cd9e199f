import { Headers, parseSessionSubject } from '@berth/contracts';
import type { Logger } from '@berth/ports';
import { inSpan, SpanKind, traceContextOf } from '@berth/telemetry';
import type { Consumer, JetStreamClient, JsMsg, ConsumerMessages } from '@nats-io/jetstream';
import { decodeJson } from '../connection/codec';
import type { JetStreamPublisher } from '../publishing/publisher';
import { DeadLetterHeaders, deadLetterSubjectFor, headerSafe } from './dead-letters';
import { classifyError, defaultRetryPolicy, retryDelayMs, type HandlerResult, type RetryPolicy } from './handler-result';
import type { DeadLetter, InboundMessage } from './inbound-message';

export type MessageHandler = (message: InboundMessage) => Promise<HandlerResult>;

/** Told about every delivery and how it was answered (metrics). */
export type ConsumerObserver = Readonly<{
  delivered(redelivered: boolean): void;
  answered(result: 'ack' | 'retry' | 'term' | 'working' | 'dead_letter'): void;
}>;

export type ConsumerRunnerOptions = Readonly<{
  js: JetStreamClient;
  stream: string;
  consumer: string;
  handler: MessageHandler;
  /** Must equal the consumer's `max_deliver`: the last attempt dead-letters instead of retrying. */
  maxDeliver: number;
  /** Dead-letter copies are published here (usually the same connection's publisher). */
  publisher: JetStreamPublisher;
  /** Messages processed at once. The kernel is version-guarded, so parallel sessions are safe. */
  concurrency?: number;
  retry?: RetryPolicy;
  /** Runs after the dead-letter copy is stored, before the message is terminated. */
  onDeadLetter?: (deadLetter: DeadLetter) => Promise<void>;
  log: Logger;
  observer?: ConsumerObserver;
}>;

const noObserver: ConsumerObserver = { delivered: () => undefined, answered: () => undefined };

/**
 * Pulls from one durable consumer and turns each handler's verdict into the JetStream reply:
 * ack → ack, retry → nak(delay), term → term, working → working. Thrown errors are classified
 * (bad input → dead-letter + term; anything else → nak with backoff) and never acked; a message
 * that fails on its last allowed delivery is dead-lettered, so nothing loops forever.
 *
 * `term` carries no reason on the wire: servers before 2.11 ignore a `+TERM <reason>` reply
 * entirely (the message is redelivered). The reason goes to the log and the dead-letter headers.
 */
/**
 * How long one pull request lives (the client asks for heartbeats every half of it). On a NATS
 * cluster a pull parked at a consumer leader that dies is only noticed after two missed heartbeats:
 * the client's 30 s default left the service deaf for half a minute after a node loss (measured,
 * docs/scale-out.md); 5 s bounds that at about 5 s for one more pull request per 5 s when idle.
 */
const PULL_EXPIRES_MS = 5_000;

export class ConsumerRunner {
  private messages: ConsumerMessages | null = null;
  private consumer: Consumer | null = null;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly waiters: (() => void)[] = [];
  private readonly concurrency: number;
  private readonly log: Logger;
  private readonly observer: ConsumerObserver;

  constructor(private readonly options: ConsumerRunnerOptions) {
    this.concurrency = Math.max(1, options.concurrency ?? 8);
    this.log = options.log.child({ stream: options.stream, consumer: options.consumer });
    this.observer = options.observer ?? noObserver;
  }

  async start(): Promise<void> {
    if (this.loop) return;
    const consumer = await this.options.js.consumers.get(this.options.stream, this.options.consumer);
    this.consumer = consumer;
    const messages = await consumer.consume({ max_messages: this.concurrency, expires: PULL_EXPIRES_MS });
    this.messages = messages;
    this.loop = this.pump(messages);
  }

  /** The consumer's backlog as the broker reports it; null before start or when the broker does not answer. */
  async pending(): Promise<Readonly<{ pending: number; ackPending: number }> | null> {
    const info = await this.consumer?.info(true).catch(() => null);
    return info ? { pending: info.num_pending, ackPending: info.num_ack_pending } : null;
  }

  /** Stops pulling, then waits for the messages already being handled. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.messages?.close();
    await this.loop;
    await Promise.allSettled([...this.inFlight]);
    this.messages = null;
    this.loop = null;
    this.stopping = false;
  }

  private async pump(messages: ConsumerMessages): Promise<void> {
    for await (const m of messages) {
      while (this.inFlight.size >= this.concurrency) await new Promise<void>((r) => this.waiters.push(r));
      const task: Promise<void> = this.process(m)
        .catch((e) => this.log.error('message left unanswered', { ...about(m.subject), stream_seq: m.seq, err: e }))
        .finally(() => {
          this.inFlight.delete(task);
          this.waiters.shift()?.();
        });
      this.inFlight.add(task);
    }
    if (!this.stopping) this.log.error('stopped pulling (consumer or stream gone?)');
  }

  private process(m: JsMsg): Promise<void> {
    const headers = headersOf(m);
    const subject = parseSessionSubject(m.subject);
    this.observer.delivered(m.redelivered);
    return inSpan(
      `${this.options.stream} process ${subject?.type ?? m.subject}`,
      {
        kind: SpanKind.CONSUMER,
        parent: traceContextOf(headers),
        attributes: {
          'messaging.system': 'nats',
          'messaging.destination.name': m.subject,
          'messaging.consumer.group.name': this.options.consumer,
          'messaging.message.delivery_count': m.info.deliveryCount,
          ...(subject ? { 'berth.session_id': subject.sessionId } : {}),
        },
      },
      () => this.handle(m, headers),
    );
  }

  private async handle(m: JsMsg, headers: Record<string, string>): Promise<void> {
    const deliveryCount = m.info.deliveryCount;
    let body: unknown;
    try {
      body = decodeJson(m.data);
    } catch (e) {
      return this.deadLetter(m, null, classifyError(e).reason);
    }

    let result: HandlerResult;
    let failure = 'handler asked for a retry';
    try {
      result = await this.options.handler({
        subject: m.subject,
        body,
        headers,
        deliveryCount,
        streamSeq: m.seq,
        redelivered: m.redelivered,
        working: () => m.working(),
      });
    } catch (e) {
      const verdict = classifyError(e);
      if (verdict.kind === 'permanent') return this.deadLetter(m, body, verdict.reason);
      failure = verdict.reason;
      result = { type: 'retry' };
    }

    switch (result.type) {
      case 'ack':
        this.observer.answered('ack');
        return m.ack();
      case 'term':
        this.log.warn('terminating a message', { ...about(m.subject), reason: result.reason });
        this.observer.answered('term');
        return m.term();
      case 'working':
        this.observer.answered('working');
        return m.working();
      case 'retry':
        if (deliveryCount >= this.options.maxDeliver) {
          return this.deadLetter(m, body, `gave up after ${deliveryCount} deliveries: ${failure}`);
        }
        this.log.warn('delivery failed, will be redelivered', { ...about(m.subject), attempt: deliveryCount, reason: failure });
        this.observer.answered('retry');
        return m.nak(result.delayMs ?? retryDelayMs(deliveryCount, this.options.retry ?? defaultRetryPolicy));
    }
  }

  private async deadLetter(m: JsMsg, body: unknown, reason: string): Promise<void> {
    const deadLetter: DeadLetter = {
      subject: m.subject,
      deadLetterSubject: deadLetterSubjectFor(m.subject),
      body,
      headers: headersOf(m),
      reason,
      deliveryCount: m.info.deliveryCount,
      streamSeq: m.seq,
    };
    this.log.error('dead-lettering a message', { ...about(m.subject), reason });
    // A failed copy leaves the message unanswered: it is redelivered rather than lost.
    await this.options.publisher.publish(deadLetter.deadLetterSubject, m.data, {
      msgId: `dlq-${this.options.stream}-${m.seq}`,
      headers: {
        ...deadLetter.headers,
        [DeadLetterHeaders.reason]: headerSafe(reason),
        [DeadLetterHeaders.originalSubject]: m.subject,
        [DeadLetterHeaders.deliveryCount]: String(m.info.deliveryCount),
      },
    });
    try {
      await this.options.onDeadLetter?.(deadLetter);
    } catch (e) {
      this.log.error('dead-letter hook failed', { ...about(m.subject), err: e });
    }
    this.observer.answered('dead_letter');
    m.term();
  }
}

/** Log fields naming what a message is about: its subject and, for session subjects, the session. */
function about(subject: string): Record<string, string> {
  const parsed = parseSessionSubject(subject);
  return parsed ? { subject, session_id: parsed.sessionId } : { subject };
}

function headersOf(m: JsMsg): Record<string, string> {
  const out: Record<string, string> = {};
  if (!m.headers) return out;
  for (const key of m.headers.keys()) {
    if (key === Headers.msgId) continue;
    out[key] = m.headers.get(key);
  }
  return out;
}
