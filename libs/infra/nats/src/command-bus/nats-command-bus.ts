import { CommandOutcomeSchema, Headers, Subjects, type CommandOutcome, type SessionCommand } from '@berth/contracts';
import { BerthError, ErrorCodes } from '@berth/core';
import type { CommandBus } from '@berth/ports';
import { createInbox, nuid, type NatsConnection, type Subscription } from '@nats-io/nats-core';
import { decodeJson } from '../connection/codec';
import { inboxPrefixOf } from '../connection/connect';
import type { JetStreamPublisher } from '../publishing/publisher';

type Waiter = Readonly<{ resolve: (outcome: CommandOutcome) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>;

export type NatsCommandBusOptions = Readonly<{ defaultTimeoutMs?: number }>;

/**
 * Sends commands to the kernel over SESSION_CMD. `msgID` = command id, so a retried send inside the
 * duplicate window is dropped by the broker; the kernel answers on the core-NATS inbox named in the
 * `Berth-Reply-To` header, which this bus subscribes to once and matches by command id.
 * A `send` whose publish the broker reports as duplicate is re-sent under a fresh message id, so a
 * caller retrying a command that was already applied still gets its (duplicate) outcome.
 */
export class NatsCommandBus implements CommandBus {
  /** Under the connection's own inbox prefix: the only replies this user may subscribe to. */
  private readonly inbox: string;
  private readonly waiters = new Map<string, Waiter[]>();
  private subscription: Subscription | null = null;
  private readonly defaultTimeoutMs: number;

  constructor(
    private readonly nc: NatsConnection,
    private readonly publisher: JetStreamPublisher,
    options: NatsCommandBusOptions = {},
  ) {
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? 10_000;
    this.inbox = createInbox(inboxPrefixOf(nc));
  }

  async send(command: SessionCommand, options: { timeoutMs?: number } = {}): Promise<CommandOutcome> {
    this.listen();
    const commandId = command.meta.command_id;
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;
    let waiter: Waiter | undefined;
    const outcome = new Promise<CommandOutcome>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (waiter) this.forget(commandId, waiter);
        reject(
          new BerthError(
            ErrorCodes.TIMEOUT,
            504,
            `the session kernel did not answer command ${commandId} within ${timeoutMs} ms; it may still be applied`,
            { command_id: commandId },
          ),
        );
      }, timeoutMs);
      waiter = { resolve, reject, timer };
      this.waiters.set(commandId, [...(this.waiters.get(commandId) ?? []), waiter]);
    });
    // The caller awaits `outcome` only after the publish; until then a rejection is not unhandled.
    outcome.catch(() => undefined);
    try {
      const receipt = await this.publish(command, { [Headers.replyTo]: this.inbox }, commandId);
      // The broker dropped a repeat inside its duplicate window, so the kernel will not see this
      // copy: send one under a fresh message id and let the kernel's own dedupe answer it.
      if (receipt.duplicate) await this.publish(command, { [Headers.replyTo]: this.inbox }, `${commandId}.resend.${nuid.next()}`);
    } catch (e) {
      if (waiter) {
        clearTimeout(waiter.timer);
        this.forget(commandId, waiter);
      }
      throw unavailable(e);
    }
    return outcome;
  }

  async dispatch(command: SessionCommand): Promise<void> {
    try {
      await this.publish(command, {}, command.meta.command_id);
    } catch (e) {
      throw unavailable(e);
    }
  }

  /** Stops listening; pending sends reject. */
  close(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
    for (const id of [...this.waiters.keys()]) {
      this.settle(id, (w) => w.reject(new BerthError(ErrorCodes.UNAVAILABLE, 503, 'command bus closed')));
    }
  }

  private publish(command: SessionCommand, headers: Record<string, string>, msgId: string) {
    const extra: Record<string, string> = { ...headers };
    if (command.meta.correlation_id) extra[Headers.correlationId] = command.meta.correlation_id;
    if (command.meta.causation_id) extra[Headers.causationId] = command.meta.causation_id;
    return this.publisher.publish(Subjects.command(command.meta.session_id, command.type), command, {
      msgId,
      headers: extra,
    });
  }

  private listen(): void {
    if (this.subscription) return;
    this.subscription = this.nc.subscribe(this.inbox, {
      callback: (err, msg) => {
        if (err) return;
        const parsed = CommandOutcomeSchema.safeParse(safeDecode(msg.data));
        if (!parsed.success) return;
        this.settle(parsed.data.command_id, (w) => w.resolve(parsed.data));
      },
    });
  }

  private settle(commandId: string, fn: (w: Waiter) => void): void {
    const waiting = this.waiters.get(commandId) ?? [];
    this.waiters.delete(commandId);
    for (const w of waiting) {
      clearTimeout(w.timer);
      fn(w);
    }
  }

  private forget(commandId: string, waiter: Waiter): void {
    const rest = (this.waiters.get(commandId) ?? []).filter((w) => w !== waiter);
    if (rest.length) this.waiters.set(commandId, rest);
    else this.waiters.delete(commandId);
  }
}

function safeDecode(data: Uint8Array): unknown {
  try {
    return decodeJson(data);
  } catch {
    return null;
  }
}

const unavailable = (e: unknown): BerthError =>
  new BerthError(ErrorCodes.UNAVAILABLE, 503, `could not hand the command to the broker: ${e instanceof Error ? e.message : String(e)}`);
