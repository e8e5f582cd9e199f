import { NestFactory } from '@nestjs/core';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { randomIds, systemClock, type Clock, type IdGenerator } from '@berth/core';
import { nestLogger } from '@berth/nest';
import type { CommandBus, Logger, SecretBox } from '@berth/ports';
import { UnconfiguredSecretBox } from '@berth/secrets';
import { httpMetrics } from '@berth/telemetry';
import { defaultRefreshPolicy, type RefreshPolicy } from '@berth/vaults-domain';
import type { TargetPolicy } from '@berth/webhooks-domain';
import type { Logger as Pino } from 'pino';
import { Registry } from 'prom-client';
import { consoleBuildExists, consoleHandlers } from '../console/serve-console';
import { bodyErrors, jsonBody } from '../http/body-parser';
import { httpTelemetry } from '../http/http-telemetry';
import { parseQueryString } from '../http/query-parser';
import type { ReadinessCheck } from '../health/readiness';
import type { SandboxProbe } from '@berth/session-use-cases';
import type { EventFeed } from '../stream/event-feed.port';
import { NO_WORKSPACE, type WorkspaceReads } from '../workspace/workspace-reads.port';
import type { SubscriberIssuer } from '../nats-credentials/subscriber-issuer.port';
import { DEFAULT_OPTIONS, type GatewayDeps, type GatewayOptions, type GatewayStore } from './gateway-deps';
import { GatewayModule } from './gateway.module';

export type CreateGatewayAppInput = Readonly<{
  store: GatewayStore;
  commandBus: CommandBus;
  eventFeed: EventFeed;
  sandboxProbe: SandboxProbe;
  /** Reads of sessions' workspaces (the sandbox-manager); without one, no session has a workspace to read. */
  workspace?: WorkspaceReads;
  subscriberIssuer?: SubscriberIssuer | null;
  clock?: Clock;
  ids?: IdGenerator;
  readiness?: readonly ReadinessCheck[];
  options?: Partial<GatewayOptions>;
  log: Logger;
  /** pino itself, for one request log line per HTTP request (nestjs-pino); none when absent. */
  pino?: Pino;
  /** Where the gateway's metrics are registered; /metrics serves it. A private one when absent. */
  registry?: Registry;
  /** The console's build directory, served at /console/ when it holds an index.html. */
  consoleDir?: string;
  /** Seals webhook and vault secrets; without one, creating them answers 503 SECRETS_NOT_CONFIGURED. */
  secrets?: SecretBox;
  /** Where webhook endpoints and OAuth token endpoints may point; public addresses only by default. */
  webhookTargets?: TargetPolicy;
  /** When mcp_oauth tokens are refreshed (as the refresher the composition root runs is told); `defaultRefreshPolicy` when absent. */
  vaultRefresh?: RefreshPolicy;
}>;

/** The gateway, composed from its ports: production wires NATS and the store (main.ts), tests wire in-memory pieces. */
export async function createGatewayApp(input: CreateGatewayAppInput): Promise<NestExpressApplication> {
  const registry = input.registry ?? new Registry();
  const deps: GatewayDeps = {
    store: input.store,
    commandBus: input.commandBus,
    eventFeed: input.eventFeed,
    sandboxProbe: input.sandboxProbe,
    workspace: input.workspace ?? NO_WORKSPACE,
    subscriberIssuer: input.subscriberIssuer ?? null,
    clock: input.clock ?? systemClock,
    ids: input.ids ?? randomIds,
    readiness: input.readiness ?? [],
    options: { ...DEFAULT_OPTIONS, ...input.options },
    log: input.log,
    metrics: httpMetrics(registry),
    secrets: input.secrets ?? new UnconfiguredSecretBox(),
    webhookTargets: input.webhookTargets ?? { allowPrivateTargets: false },
    vaultRefresh: input.vaultRefresh ?? defaultRefreshPolicy,
  };
  const app = await NestFactory.create<NestExpressApplication>(GatewayModule.with(deps, input.pino), new ExpressAdapter(), {
    bodyParser: false,
    logger: nestLogger(input.log),
  });
  app.disable('x-powered-by');
  app.use(httpTelemetry(deps.metrics));
  // Prometheus text format; like /healthz it needs no key (keep the gateway's port off the internet, see docs/deploy.md).
  app.use('/metrics', (req: { method: string }, res: { type(t: string): { send(b: string): void } }, next: () => void) =>
    req.method === 'GET' ? void registry.metrics().then((text) => res.type(registry.contentType).send(text), next) : next(),
  );
  app.set('query parser', (search: string) => parseQueryString(search));
  if (input.consoleDir && consoleBuildExists(input.consoleDir)) app.use('/console', ...consoleHandlers(input.consoleDir));
  app.use(jsonBody(deps.options.bodyLimit));
  app.use(bodyErrors);
  return app;
}
