import { Module, type DynamicModule } from '@nestjs/common';
import { SessionCommands, SessionUseCases } from '@berth/session-use-cases';
import { APP_FILTER, APP_GUARD, DiscoveryModule } from '@nestjs/core';
import { AgentsController } from '../agents/agents.controller';
import { AgentsService } from '../agents/agents.service';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { EnvironmentsController } from '../environments/environments.controller';
import { EnvironmentsService } from '../environments/environments.service';
import { EventsController } from '../events/events.controller';
import { EventsService } from '../events/events.service';
import { HealthController } from '../health/health.controller';
import { ErrorsFilter } from '../http/errors.filter';
import { RouteTable } from '../http/route-table';
import { OpenApiController } from '../openapi/openapi.controller';
import { SessionsController } from '../sessions/sessions.controller';
import { SessionsService } from '../sessions/sessions.service';
import { StreamController } from '../stream/stream.controller';
import type { GatewayDeps } from './gateway-deps';
import { DEPS } from './tokens';

/** Nest wiring only: each capability's service is built from the composed dependencies. */
@Module({})
export class GatewayModule {
  static with(deps: GatewayDeps): DynamicModule {
    return {
      module: GatewayModule,
      imports: [DiscoveryModule],
      controllers: [AgentsController, EnvironmentsController, SessionsController, EventsController, StreamController, OpenApiController, HealthController],
      providers: [
        { provide: DEPS, useValue: deps },
        { provide: SessionCommands, useFactory: (d: GatewayDeps) => new SessionCommands(d.commandBus, d.clock, d.ids, d.options.commandTimeoutMs), inject: [DEPS] },
        {
          provide: SessionUseCases,
          useFactory: (d: GatewayDeps, commands: SessionCommands) =>
            new SessionUseCases({ sessions: d.store.sessions, idempotency: d.store.idempotency, journal: d.store.journal, commands, probe: d.sandboxProbe, clock: d.clock, ids: d.ids }),
          inject: [DEPS, SessionCommands],
        },
        { provide: AgentsService, useFactory: (d: GatewayDeps) => new AgentsService(d.store.agents, d.clock, d.ids), inject: [DEPS] },
        { provide: EnvironmentsService, useFactory: (d: GatewayDeps) => new EnvironmentsService(d.store.environments, d.clock, d.ids), inject: [DEPS] },
        {
          provide: SessionsService,
          useFactory: (d: GatewayDeps, environments: EnvironmentsService, useCases: SessionUseCases) =>
            new SessionsService({ sessions: d.store.sessions, agents: d.store.agents, environments, useCases, clock: d.clock }),
          inject: [DEPS, EnvironmentsService, SessionUseCases],
        },
        {
          provide: EventsService,
          useFactory: (d: GatewayDeps, useCases: SessionUseCases) => new EventsService(d.store.journal, useCases),
          inject: [DEPS, SessionUseCases],
        },
        RouteTable,
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_FILTER, useClass: ErrorsFilter },
      ],
    };
  }
}
