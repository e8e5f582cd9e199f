import { Module, type DynamicModule } from '@nestjs/common';
import { SessionCommands, SessionUseCases } from '@berth/session-use-cases';
import { APP_FILTER, APP_GUARD, DiscoveryModule } from '@nestjs/core';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoggerModule } from 'nestjs-pino';
import type { Logger as Pino } from 'pino';
import { AgentsController } from '../agents/agents.controller';
import { AgentsService } from '../agents/agents.service';
import { ApiKeyGuard } from '../auth/api-key.guard';
import { EnvironmentsController } from '../environments/environments.controller';
import { EnvironmentsService } from '../environments/environments.service';
import { EventsController } from '../events/events.controller';
import { EventsService } from '../events/events.service';
import { FilesController } from '../files/files.controller';
import { FilesService } from '../files/files.service';
import { HealthController } from '../health/health.controller';
import { ErrorsFilter } from '../http/errors.filter';
import { RouteTable } from '../http/route-table';
import { NatsCredentialsController } from '../nats-credentials/nats-credentials.controller';
import { NatsCredentialsService } from '../nats-credentials/nats-credentials.service';
import { OpenApiController } from '../openapi/openapi.controller';
import { ResourceResolver } from '../resources/resource-resolver';
import { ResourcesController } from '../resources/resources.controller';
import { ResourcesService } from '../resources/resources.service';
import { SessionsController } from '../sessions/sessions.controller';
import { SessionsService } from '../sessions/sessions.service';
import { StreamController } from '../stream/stream.controller';
import { VaultsController } from '../vaults/vaults.controller';
import { VaultsService } from '../vaults/vaults.service';
import { ResourceWebhooks } from '../webhooks/delivery/resource-webhooks';
import { WebhooksController } from '../webhooks/webhooks.controller';
import { WebhooksService } from '../webhooks/webhooks.service';
import { WorkspaceController } from '../workspace/workspace.controller';
import { ExportController } from '../export/export.controller';
import { SessionExport } from '../export/session-export';
import { ImportController } from '../import/import.controller';
import { SessionImport } from '../import/session-import';
import { ARCHIVE_LIMITS } from '@berth/contracts';
import type { GatewayDeps } from './gateway-deps';
import { DEPS } from './tokens';

/** Nest wiring only: each capability's service is built from the composed dependencies. */
@Module({})
export class GatewayModule {
  static with(deps: GatewayDeps, pino?: Pino): DynamicModule {
    return {
      module: GatewayModule,
      imports: pino ? [DiscoveryModule, requestLogging(pino)] : [DiscoveryModule],
      controllers: [
        AgentsController,
        EnvironmentsController,
        // Before the sessions' routes: POST /v1/sessions/import is no session id.
        ImportController,
        SessionsController,
        EventsController,
        StreamController,
        FilesController,
        ResourcesController,
        WorkspaceController,
        ExportController,
        NatsCredentialsController,
        WebhooksController,
        VaultsController,
        OpenApiController,
        HealthController,
      ],
      providers: [
        { provide: DEPS, useValue: deps },
        { provide: SessionCommands, useFactory: (d: GatewayDeps) => new SessionCommands(d.commandBus, d.clock, d.ids, d.options.commandTimeoutMs), inject: [DEPS] },
        {
          provide: SessionUseCases,
          useFactory: (d: GatewayDeps, commands: SessionCommands) =>
            new SessionUseCases({
              sessions: d.store.sessions,
              idempotency: d.store.idempotency,
              journal: d.store.journal,
              commands,
              probe: d.sandboxProbe,
              secrets: d.store.secrets,
              transcripts: d.store.transcripts,
              box: d.secrets,
              clock: d.clock,
              ids: d.ids,
            }),
          inject: [DEPS, SessionCommands],
        },
        {
          provide: ResourceWebhooks,
          useFactory: (d: GatewayDeps) => new ResourceWebhooks({ endpoints: d.store.webhookEndpoints, now: () => d.clock.now().toISOString() }),
          inject: [DEPS],
        },
        { provide: AgentsService, useFactory: (d: GatewayDeps, webhooks: ResourceWebhooks) => new AgentsService(d.store.agents, d.clock, d.ids, webhooks), inject: [DEPS, ResourceWebhooks] },
        {
          provide: EnvironmentsService,
          useFactory: (d: GatewayDeps, webhooks: ResourceWebhooks) => new EnvironmentsService(d.store.environments, d.clock, d.ids, webhooks, d.options.allowHostNetwork ?? false),
          inject: [DEPS, ResourceWebhooks],
        },
        {
          provide: FilesService,
          useFactory: (d: GatewayDeps) => new FilesService({ files: d.store.files, blobs: d.store.blobs, clock: d.clock, ids: d.ids, maxBytes: d.options.fileMaxBytes }),
          inject: [DEPS],
        },
        {
          provide: ResourceResolver,
          useFactory: (d: GatewayDeps, files: FilesService) => new ResourceResolver({ files, clock: d.clock, ids: d.ids }),
          inject: [DEPS, FilesService],
        },
        {
          provide: SessionsService,
          useFactory: (d: GatewayDeps, environments: EnvironmentsService, useCases: SessionUseCases, resources: ResourceResolver) =>
            new SessionsService({ sessions: d.store.sessions, agents: d.store.agents, environments, useCases, resources, vaults: d.store.vaults, clock: d.clock }),
          inject: [DEPS, EnvironmentsService, SessionUseCases, ResourceResolver],
        },
        {
          provide: SessionExport,
          useFactory: (d: GatewayDeps, sessions: SessionsService, agents: AgentsService, environments: EnvironmentsService) =>
            new SessionExport({ sessions, agents, environments, journal: d.store.journal, transcripts: d.store.transcripts, files: d.store.files, blobs: d.store.blobs, workspace: d.workspace, clock: d.clock }),
          inject: [DEPS, SessionsService, AgentsService, EnvironmentsService],
        },
        {
          provide: SessionImport,
          useFactory: (d: GatewayDeps, sessions: SessionsService, agents: AgentsService, environments: EnvironmentsService, useCases: SessionUseCases) =>
            new SessionImport({
              agents,
              agentStore: d.store.agents,
              environments,
              environmentStore: d.store.environments,
              sessions,
              useCases,
              files: d.store.files,
              blobs: d.store.blobs,
              ids: d.ids,
              maxBytes: d.options.importMaxBytes ?? ARCHIVE_LIMITS.archiveBytes,
            }),
          inject: [DEPS, SessionsService, AgentsService, EnvironmentsService, SessionUseCases],
        },
        {
          provide: ResourcesService,
          useFactory: (d: GatewayDeps, useCases: SessionUseCases, resolver: ResourceResolver) => new ResourcesService({ useCases, resolver }),
          inject: [DEPS, SessionUseCases, ResourceResolver],
        },
        {
          provide: EventsService,
          useFactory: (d: GatewayDeps, useCases: SessionUseCases) => new EventsService(d.store.journal, useCases),
          inject: [DEPS, SessionUseCases],
        },
        {
          provide: NatsCredentialsService,
          useFactory: (d: GatewayDeps) => new NatsCredentialsService(d.store.natsCredentials, d.subscriberIssuer, d.clock, d.ids),
          inject: [DEPS],
        },
        {
          provide: WebhooksService,
          useFactory: (d: GatewayDeps) =>
            new WebhooksService({ endpoints: d.store.webhookEndpoints, deliveries: d.store.webhookDeliveries, secrets: d.secrets, clock: d.clock, ids: d.ids, targets: d.webhookTargets }),
          inject: [DEPS],
        },
        {
          provide: VaultsService,
          useFactory: (d: GatewayDeps, webhooks: ResourceWebhooks) =>
            new VaultsService({ vaults: d.store.vaults, secrets: d.secrets, clock: d.clock, ids: d.ids, webhooks, refresh: d.vaultRefresh, targets: d.webhookTargets }),
          inject: [DEPS, ResourceWebhooks],
        },
        RouteTable,
        { provide: APP_GUARD, useClass: ApiKeyGuard },
        { provide: APP_FILTER, useFactory: (d: GatewayDeps) => new ErrorsFilter(d.log), inject: [DEPS] },
      ],
    };
  }
}

const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One line per HTTP request (method, route, status, time; no headers, so no key), with the
 * session it is about. Health checks and scrapes are not logged.
 */
function requestLogging(pino: Pino): DynamicModule {
  return LoggerModule.forRoot({
    pinoHttp: {
      logger: pino,
      autoLogging: { ignore: (req: IncomingMessage) => QUIET_PATHS.has((req.url ?? '').split('?')[0]) || (req.url ?? '').startsWith('/console') },
      customLogLevel: (_req: IncomingMessage, res: ServerResponse, error?: Error) => (error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
      customProps: (req: IncomingMessage) => {
        const sessionId = (req as IncomingMessage & { params?: { session_id?: string } }).params?.session_id;
        return sessionId ? { session_id: sessionId } : {};
      },
      serializers: {
        req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, path: req.url.split('?')[0] }),
        res: (res: { statusCode: number }) => ({ status: res.statusCode }),
      },
    },
  });
}
