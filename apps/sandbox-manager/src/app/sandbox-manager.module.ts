import { Module, type DynamicModule } from '@nestjs/common';
import { SessionEventReactor } from '../sessions/session-event-reactor';
import { SessionEventsController } from './session-events.controller';
import { HEARTBEAT_MS } from './tokens';

/** Nest wiring only: the reactor is composed from plain classes in `start-sandbox-manager.ts`. */
@Module({})
export class SandboxManagerModule {
  static forRoot(reactor: SessionEventReactor, heartbeatMs: number): DynamicModule {
    return {
      module: SandboxManagerModule,
      controllers: [SessionEventsController],
      providers: [
        { provide: SessionEventReactor, useValue: reactor },
        { provide: HEARTBEAT_MS, useValue: heartbeatMs },
      ],
    };
  }
}
