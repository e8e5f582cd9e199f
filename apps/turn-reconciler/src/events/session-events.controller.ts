import { parseRecordedEvent } from '@berth/contracts';
import { HandlerResults, type HandlerResult } from '@berth/nats';
import type { JetStreamContext } from '@berth/nest';
import { TURN_RECONCILE_EVENT_TYPES } from '@berth/turns-domain';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern } from '@nestjs/microservices';
import { TurnReconcilerService } from '../reconciling/turn-reconciler.service';

/**
 * The SESSION_EVT events the reconciler folds land here (others are acked by the transport). A
 * malformed event is bad input (dead-lettered); a journal read that fails is retried with backoff.
 */
@Controller()
export class SessionEventsController {
  constructor(@Inject(TurnReconcilerService) private readonly reconciler: TurnReconcilerService) {}

  @EventPattern([...TURN_RECONCILE_EVENT_TYPES])
  async handle(@Ctx() context: JetStreamContext): Promise<HandlerResult> {
    await this.reconciler.onEvent(parseRecordedEvent(context.message.body));
    return HandlerResults.ack();
  }
}
