import { Headers, parseCommand, parseSessionSubject, type CommandOutcome, type SessionCommand } from '@berth/contracts';
import { isBerthError, isSafeToken, ValidationError } from '@berth/core';
import { encodeJson, type HandlerResult, type InboundMessage } from '@berth/nats';
import type { Logger } from '@berth/ports';
import type { KernelMetrics } from '@berth/telemetry';
import type { CrashPoints } from '../config/crash-points';
import type { CommandExecutor } from '../kernel/session-kernel.port';
import type { EventOutbox } from '../outbox/event-outbox';
import type { CommandOrder } from './command-order';
import type { SessionLocks } from './session-locks';

/** Where outcomes are answered: core NATS, fire-and-forget (the caller may have given up). */
export type ReplyChannel = Readonly<{ publish(subject: string, data: Uint8Array): void }>;

export type CommandProcessorDeps = Readonly<{
  kernel: CommandExecutor;
  outbox: EventOutbox;
  locks: SessionLocks;
  /** Applies one session's commands in stream order across kernel replicas. */
  order: CommandOrder;
  replies: ReplyChannel;
  crash: CrashPoints;
  log: Logger;
  metrics: KernelMetrics;
}>;

/** How a command ended, as metrics and logs name it. */
const outcomeOf = (outcome: CommandOutcome): 'applied' | 'noop' | 'duplicate' | 'refused' =>
  !outcome.ok ? 'refused' : outcome.duplicate ? 'duplicate' : outcome.events.length === 0 ? 'noop' : 'applied';

/** Reply subjects are NATS inboxes; anything else (e.g. a stream subject) is refused. */
const INBOX = /^_INBOX\.[A-Za-z0-9_.-]{1,200}$/;

/**
 * One command delivery: validate at the edge, wait until the session's older commands are done (on
 * any kernel replica), execute in the kernel, publish the new events through the outbox, answer
 * the caller, ack. Bad input throws a ValidationError (the runner dead-letters
 * it); infrastructure failures throw and are retried; nothing is acked before the publish.
 */
export class CommandProcessor {
  constructor(private readonly deps: CommandProcessorDeps) {}

  async handle(message: InboundMessage): Promise<HandlerResult> {
    let command: SessionCommand;
    try {
      command = this.parse(message);
    } catch (e) {
      this.replyRefusal(message, e);
      throw e;
    }
    await this.deps.order.awaitTurn(command.meta.session_id, message.streamSeq, message.working);
    const outcome = await this.apply(command);
    this.deps.crash.reached('after-publish-before-ack');
    this.reply(message.headers[Headers.replyTo], outcome);
    return { type: 'ack' };
  }

  /** Executes and publishes under the session lock. Also used for commands the kernel raises itself. */
  apply(command: SessionCommand): Promise<CommandOutcome> {
    const sessionId = command.meta.session_id;
    const fields = { session_id: sessionId, command_id: command.meta.command_id, command: command.type };
    return this.deps.locks.run(sessionId, async () => {
      let outcome: CommandOutcome;
      try {
        const executed = await this.deps.kernel.executeWithEvents(command);
        outcome = executed.outcome;
        // A duplicate's events were committed by an earlier delivery; the relay owns any left unpublished.
        if (executed.events.length > 0) {
          this.deps.crash.reached('after-commit-before-publish');
          await this.deps.outbox.publish(sessionId, executed.ownerId, executed.events);
        }
      } catch (error) {
        this.deps.metrics.commands.inc({ type: command.type, outcome: 'failed' });
        this.deps.log.warn('command failed, will be retried', { ...fields, err: error });
        throw error;
      }
      const result = outcomeOf(outcome);
      this.deps.metrics.commands.inc({ type: command.type, outcome: result });
      if (outcome.ok) this.deps.log.debug(`command ${result}`, { ...fields, events: outcome.events.map((e) => e.type) });
      else this.deps.log.info('command refused', { ...fields, code: outcome.error.code, reason: outcome.error.message });
      return outcome;
    });
  }

  private parse(message: InboundMessage): SessionCommand {
    const command = parseCommand(message.body);
    const subject = parseSessionSubject(message.subject);
    if (!subject || subject.sessionId !== command.meta.session_id || subject.type !== command.type) {
      throw new ValidationError(`subject ${message.subject} does not match command ${command.type} of session ${command.meta.session_id}`, 'subject');
    }
    return command;
  }

  private reply(replyTo: string | undefined, outcome: CommandOutcome): void {
    if (replyTo && INBOX.test(replyTo)) this.deps.replies.publish(replyTo, encodeJson(outcome));
  }

  /** The sender of an invalid command still gets a coded refusal when it can be addressed. */
  private replyRefusal(message: InboundMessage, error: unknown): void {
    if (!isBerthError(error)) return;
    const meta = (message.body as { meta?: { command_id?: unknown; session_id?: unknown } } | null)?.meta;
    if (!isSafeToken(meta?.command_id)) return;
    this.reply(message.headers[Headers.replyTo], {
      ok: false,
      command_id: meta.command_id,
      session_id: isSafeToken(meta?.session_id) ? meta.session_id : (parseSessionSubject(message.subject)?.sessionId ?? ''),
      error: { code: error.code, status: error.status, message: error.message, details: { ...error.details } },
    });
  }
}
