import { parseRecordedEvent, type RecordedEvent } from '@berth/contracts';
import type { JetStreamContext } from '@berth/nest';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern } from '@nestjs/microservices';
import { SessionEventReactor } from '../sessions/session-event-reactor';
import { HEARTBEAT_MS } from './tokens';

/** SESSION_EVT deliveries → the reactor. Returning acks; a throw is classified by the transport (retry / dead-letter). */
@Controller()
export class SessionEventsController {
  constructor(
    @Inject(SessionEventReactor) private readonly reactor: SessionEventReactor,
    @Inject(HEARTBEAT_MS) private readonly heartbeatMs: number,
  ) {}

  @EventPattern('SandboxRequested')
  sandboxRequested(@Ctx() context: JetStreamContext): Promise<void> {
    return this.reactor.sandboxRequested(eventOf(context, 'SandboxRequested'));
  }

  /** A turn runs as long as its harness does: the delivery stays in flight (working) until it ends. */
  @EventPattern('TurnStarted')
  async turnStarted(@Ctx() context: JetStreamContext): Promise<void> {
    const heartbeat = setInterval(() => context.message.working(), this.heartbeatMs);
    try {
      await this.reactor.turnStarted(eventOf(context, 'TurnStarted'), { redelivered: context.message.redelivered });
    } finally {
      clearInterval(heartbeat);
    }
  }

  @EventPattern('InterruptRequested')
  interruptRequested(@Ctx() context: JetStreamContext): Promise<void> {
    return this.reactor.interruptRequested(eventOf(context, 'InterruptRequested'));
  }

  @EventPattern('ToolUseConfirmed')
  toolUseConfirmed(@Ctx() context: JetStreamContext): Promise<void> {
    return this.reactor.toolUseConfirmed(eventOf(context, 'ToolUseConfirmed'));
  }

  @EventPattern('SessionPaused')
  sessionPaused(@Ctx() context: JetStreamContext): Promise<void> {
    return this.reactor.sessionPaused(eventOf(context, 'SessionPaused'));
  }

  @EventPattern(['SessionTerminated', 'SessionDeleted'])
  sessionEnded(@Ctx() context: JetStreamContext): Promise<void> {
    const event = parseRecordedEvent(context.message.body);
    if (event.type !== 'SessionTerminated' && event.type !== 'SessionDeleted') return Promise.resolve();
    return this.reactor.sessionEnded(event);
  }

  @EventPattern('SandboxLost')
  sandboxLost(@Ctx() context: JetStreamContext): Promise<void> {
    return this.reactor.sandboxLost(eventOf(context, 'SandboxLost'));
  }
}

function eventOf<T extends RecordedEvent['type']>(context: JetStreamContext, type: T): Extract<RecordedEvent, { type: T }> {
  const event = parseRecordedEvent(context.message.body);
  if (event.type !== type) throw new Error(`expected a ${type} event on ${context.message.subject}, got ${event.type}`);
  return event as Extract<RecordedEvent, { type: T }>;
}
