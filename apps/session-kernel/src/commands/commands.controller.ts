import { COMMAND_TYPES } from '@berth/contracts';
import type { HandlerResult } from '@berth/nats';
import type { JetStreamContext } from '@berth/nest';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern } from '@nestjs/microservices';
import { CommandProcessor } from './command-processor';

/** Every SESSION_CMD command type lands here; the returned HandlerResult becomes the ack. */
@Controller()
export class CommandsController {
  constructor(@Inject(CommandProcessor) private readonly processor: CommandProcessor) {}

  @EventPattern([...COMMAND_TYPES])
  handle(@Ctx() context: JetStreamContext): Promise<HandlerResult> {
    return this.processor.handle(context.message);
  }
}
