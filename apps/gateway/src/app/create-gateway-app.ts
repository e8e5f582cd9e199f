import { NestFactory } from '@nestjs/core';
import type { LogLevel } from '@nestjs/common';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { randomIds, systemClock, type Clock, type IdGenerator } from '@berth/core';
import type { CommandBus } from '@berth/ports';
import { consoleBuildExists, consoleHandlers } from '../console/serve-console';
import { bodyErrors, jsonBody } from '../http/body-parser';
import { parseQueryString } from '../http/query-parser';
import type { ReadinessCheck } from '../health/readiness';
import type { SandboxProbe } from '@berth/session-use-cases';
import type { EventFeed } from '../stream/event-feed.port';
import { DEFAULT_OPTIONS, type GatewayDeps, type GatewayOptions, type GatewayStore } from './gateway-deps';
import { GatewayModule } from './gateway.module';

export type CreateGatewayAppInput = Readonly<{
  store: GatewayStore;
  commandBus: CommandBus;
  eventFeed: EventFeed;
  sandboxProbe: SandboxProbe;
  clock?: Clock;
  ids?: IdGenerator;
  readiness?: readonly ReadinessCheck[];
  options?: Partial<GatewayOptions>;
  /** Nest's log levels; false silences the framework (tests). */
  logger?: false | LogLevel[];
  /** The console's build directory, served at /console/ when it holds an index.html. */
  consoleDir?: string;
}>;

/** The gateway, composed from its ports: production wires NATS and the store (main.ts), tests wire in-memory pieces. */
export async function createGatewayApp(input: CreateGatewayAppInput): Promise<NestExpressApplication> {
  const deps: GatewayDeps = {
    store: input.store,
    commandBus: input.commandBus,
    eventFeed: input.eventFeed,
    sandboxProbe: input.sandboxProbe,
    clock: input.clock ?? systemClock,
    ids: input.ids ?? randomIds,
    readiness: input.readiness ?? [],
    options: { ...DEFAULT_OPTIONS, ...input.options },
  };
  const app = await NestFactory.create<NestExpressApplication>(GatewayModule.with(deps), new ExpressAdapter(), {
    bodyParser: false,
    logger: input.logger ?? ['error', 'warn'],
  });
  app.disable('x-powered-by');
  app.set('query parser', (search: string) => parseQueryString(search));
  if (input.consoleDir && consoleBuildExists(input.consoleDir)) app.use('/console', ...consoleHandlers(input.consoleDir));
  app.use(jsonBody(deps.options.bodyLimit));
  app.use(bodyErrors);
  return app;
}
