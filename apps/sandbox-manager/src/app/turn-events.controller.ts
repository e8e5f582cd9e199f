import type { JetStreamContext } from '@berth/nest';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern } from '@nestjs/microservices';
import { SandboxManagerShell } from '../workflow/sandbox-manager-shell';
import { eventOf, whileWorking } from './deliveries';
import { HEARTBEAT_MS } from './tokens';

/**
 * The turns consumer (`sandbox-manager-turns`, `TurnStarted` only). A turn runs as long as its
 * harness does and its delivery stays in flight until it ends, so a crashed manager's turn is
 * redelivered (and reattached). These deliveries fill this consumer's slots, never the control one's.
 */
@Controller()
export class TurnEventsController {
  constructor(
    @Inject(SandboxManagerShell) private readonly shell: SandboxManagerShell,
    @Inject(HEARTBEAT_MS) private readonly heartbeatMs: number,
  ) {}

  @EventPattern('TurnStarted')
  turnStarted(@Ctx() context: JetStreamContext): Promise<void> {
    const event = eventOf(context, 'TurnStarted');
    return whileWorking(context, this.heartbeatMs, async () => {
      await this.shell.deliver(event, context.message.redelivered);
      await this.shell.turnSettled(event.session_id, event.data.turn_id);
    });
  }
}
