import { Module, type DynamicModule } from '@nestjs/common';
import { SessionEventsController } from './events/session-events.controller';
import { TurnReconcilerService } from './reconciling/turn-reconciler.service';

/** Nest wiring only: the service is composed in main.ts from the real adapters. */
@Module({})
export class ReconcilerModule {
  static forRoot(reconciler: TurnReconcilerService): DynamicModule {
    return {
      module: ReconcilerModule,
      controllers: [SessionEventsController],
      providers: [{ provide: TurnReconcilerService, useValue: reconciler }],
    };
  }
}
