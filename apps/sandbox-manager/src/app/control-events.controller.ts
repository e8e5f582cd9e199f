import type { JetStreamContext } from '@berth/nest';
import { Controller, Inject } from '@nestjs/common';
import { Ctx, EventPattern } from '@nestjs/microservices';
import { SandboxManagerShell } from '../workflow/sandbox-manager-shell';
import { eventOf, whileWorking } from './deliveries';
import { HEARTBEAT_MS } from './tokens';

/** What the control consumer acts on; it skips `TurnStarted` (the turns consumer's). */
export const CONTROL_EVENT_TYPES = [
  'SandboxRequested',
  'InterruptRequested',
  'ToolUseConfirmed',
  'CustomToolResultReceived',
  // The last answer of a turn whose harness a pause released: the turn goes on in a new one.
  'TurnResumed',
  'SessionTerminated',
  'SessionArchived',
  'SessionDeleted',
  'SessionPaused',
  'SandboxLost',
  'SessionResourceAdded',
] as const;

/**
 * The control consumer (`sandbox-manager-control`): sandbox requests, interrupts, tool
 * confirmations (and the resumed turns a pause left without a harness), terminate, archive, delete, pause, lost sandboxes and added resources. Each is short (a container start
 * at most), so an interrupt never waits behind running turns. A handler returns once the
 * activities it caused are done; a failed one is retried by redelivery.
 */
@Controller()
export class ControlEventsController {
  constructor(
    @Inject(SandboxManagerShell) private readonly shell: SandboxManagerShell,
    @Inject(HEARTBEAT_MS) private readonly heartbeatMs: number,
  ) {}

  @EventPattern([...CONTROL_EVENT_TYPES])
  control(@Ctx() context: JetStreamContext): Promise<void> {
    const event = eventOf(context, ...CONTROL_EVENT_TYPES);
    return whileWorking(context, this.heartbeatMs, () => this.shell.deliver(event, context.message.redelivered));
  }
}
