import { parseRecordedEvent } from '@berth/contracts';
import { HandlerResults, type HandlerResult } from '@berth/nats';
import type { JetStreamContext } from '@berth/nest';
import { WEBHOOK_SOURCE_EVENT_TYPES } from '@berth/webhooks-domain';
import { Controller, Inject, Module, type DynamicModule } from '@nestjs/common';
import { Ctx, EventPattern } from '@nestjs/microservices';
import { WebhookPlanner } from './webhook-planner';

/** The session events that make webhook deliveries land here (others are acked by the transport); a store error naks for a retry. */
@Controller()
export class WebhookEventsController {
  constructor(@Inject(WebhookPlanner) private readonly planner: WebhookPlanner) {}

  @EventPattern([...WEBHOOK_SOURCE_EVENT_TYPES])
  async handle(@Ctx() context: JetStreamContext): Promise<HandlerResult> {
    await this.planner.onEvent(parseRecordedEvent(context.message.body));
    return HandlerResults.ack();
  }
}

/** Nest wiring of the webhooks consumer; the planner is composed in main.ts. */
@Module({})
export class WebhookEventsModule {
  static forRoot(planner: WebhookPlanner): DynamicModule {
    return { module: WebhookEventsModule, controllers: [WebhookEventsController], providers: [{ provide: WebhookPlanner, useValue: planner }] };
  }
}
