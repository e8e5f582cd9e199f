import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { SandboxManagerShell } from '../workflow/sandbox-manager-shell';
import { ControlEventsController } from './control-events.controller';
import { HEARTBEAT_MS } from './tokens';
import { TurnEventsController } from './turn-events.controller';

/** Nest wiring only: the shell is composed from plain classes in `start-sandbox-manager.ts`. */
function consumerModule(module: Type<unknown>, controller: Type<unknown>, shell: SandboxManagerShell, heartbeatMs: number): DynamicModule {
  return {
    module,
    controllers: [controller],
    providers: [
      { provide: SandboxManagerShell, useValue: shell },
      { provide: HEARTBEAT_MS, useValue: heartbeatMs },
    ],
  };
}

@Module({})
export class TurnEventsModule {
  static forRoot(shell: SandboxManagerShell, heartbeatMs: number): DynamicModule {
    return consumerModule(TurnEventsModule, TurnEventsController, shell, heartbeatMs);
  }
}

@Module({})
export class ControlEventsModule {
  static forRoot(shell: SandboxManagerShell, heartbeatMs: number): DynamicModule {
    return consumerModule(ControlEventsModule, ControlEventsController, shell, heartbeatMs);
  }
}
