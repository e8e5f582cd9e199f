import { Headers } from '@berth/contracts';
import type { JetStreamClient, JsMsg, ConsumerMessages } from '@nats-io/jetstream';
import { decodeJson } from '../connection/codec';
import type { JetStreamPublisher } from '../publishing/publisher';
import { DeadLetterHeaders, deadLetterSubjectFor, headerSafe } from './dead-letters';
import { classifyError, defaultRetryPolicy, retryDelayMs, type HandlerResult, type RetryPolicy } from './handler-result';
import type { DeadLetter, InboundMessage } from './inbound-message';

export type MessageHandler = (message: InboundMessage) => Promise<HandlerResult>;

export type RunnerLog = Readonly<{ warn(message: string): void; error(message: string): void }>;

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
  log?: RunnerLog;
}>;

const consoleLog: RunnerLog = { warn: (m) => console.warn(m), error: (m) => console.error(m) };

/**
 * Pulls from one durable consumer and turns each handler's verdict into the JetStream reply:
 * ack → ack, retry → nak(delay), term → term, working → working. Thrown errors are classified
 * (bad input → dead-letter + term; anything else → nak with backoff) and never acked; a message
 * that fails on its last allowed delivery is dead-lettered, so nothing loops forever.
 *
 * `term` carries no reason on the wire: servers before 2.11 ignore a `+TERM <reason>` reply
 * entirely (the message is redelivered). The reason goes to the log and the dead-letter headers.
 */
export class ConsumerRunner {
  private messages: ConsumerMessages | null = null;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly waiters: (() => void)[] = [];
  private readonly concurrency: number;
  private readonly log: RunnerLog;

  constructor(private readonly options: ConsumerRunnerOptions) {
    this.concurrency = Math.max(1, options.concurrency ?? 8);
    this.log = options.log ?? consoleLog;
  }

  async start(): Promise<void> {
    if (this.loop) return;
    const consumer = await this.options.js.consumers.get(this.options.stream, this.options.consumer);
    const messages = await consumer.consume({ max_messages: this.concurrency });
    this.messages = messages;
    this.loop = this.pump(messages);
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
        .catch((e) => this.log.error(`consumer ${this.options.consumer}: message ${m.seq} left unanswered: ${String(e)}`))
        .finally(() => {
          this.inFlight.delete(task);
          this.waiters.shift()?.();
        });
      this.inFlight.add(task);
    }
    if (!this.stopping) this.log.error(`consumer ${this.options.consumer}: stopped pulling (consumer or stream gone?)`);
  }

  private async process(m: JsMsg): Promise<void> {
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
        headers: headersOf(m),
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
        return m.ack();
      case 'term':
        this.log.warn(`consumer ${this.options.consumer}: terminating ${m.subject}: ${result.reason}`);
        return m.term();
      case 'working':
        return m.working();
      case 'retry':
        if (deliveryCount >= this.options.maxDeliver) {
          return this.deadLetter(m, body, `gave up after ${deliveryCount} deliveries: ${failure}`);
        }
        this.log.warn(`consumer ${this.options.consumer}: ${m.subject} attempt ${deliveryCount} failed: ${failure}`);
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
    this.log.error(`consumer ${this.options.consumer}: dead-lettering ${m.subject} (${reason})`);
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
      this.log.error(`consumer ${this.options.consumer}: dead-letter hook failed for ${m.subject}: ${String(e)}`);
    }
    m.term();
  }
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
