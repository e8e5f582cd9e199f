import type { Logger } from '@berth/ports';
import type { Logger as Pino } from 'pino';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { createLogger, type LoggerOptions } from './logging/create-logger';
import { serviceRegistry } from './metrics/berth-metrics';
import { startMetricsServer, type MetricsServer } from './metrics/metrics-server';
import { startTracing, type Tracing } from './tracing/tracing';

/** The telemetry knobs every service reads (see docs/deploy.md "Logs, metrics, traces"). */
const TelemetryEnvSchema = z.object({
  BERTH_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** Pretty on a terminal and JSON lines elsewhere unless set. */
  BERTH_LOG_FORMAT: z.enum(['json', 'pretty']).optional(),
  /** Port of GET /metrics for services without an HTTP API; unset: no metrics port, 0: any free port. */
  BERTH_METRICS_PORT: z.preprocess((v) => (v === '' ? undefined : v), z.coerce.number().int().min(0).max(65_535).optional()),
  BERTH_METRICS_HOST: z.string().min(1).default('127.0.0.1'),
});

export type ServiceTelemetry = Readonly<{
  log: Logger;
  /** For framework adapters that take pino itself (pino-http). */
  pino: Pino;
  registry: Registry;
  tracing: Tracing;
  /** Where /metrics is served on its own port; null when it is not (the gateway serves it itself). */
  metrics: MetricsServer | null;
  /** Stops the metrics port and flushes spans. */
  shutdown(): Promise<void>;
}>;

/**
 * Logging, metrics and tracing for one service process, from its environment. Call it first in
 * main: the tracing context must be in place before anything creates a span.
 */
export async function startServiceTelemetry(
  service: string,
  options: Readonly<{ env?: NodeJS.ProcessEnv; metricsPort?: boolean; destination?: LoggerOptions['destination'] }> = {},
): Promise<ServiceTelemetry> {
  const env = options.env ?? process.env;
  const parsed = TelemetryEnvSchema.safeParse(env);
  if (!parsed.success) throw new Error(`invalid configuration:\n${parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`).join('\n')}`);
  const config = parsed.data;
  const tracing = startTracing({ service, env });
  const { log, pino } = createLogger({ service, level: config.BERTH_LOG_LEVEL, format: config.BERTH_LOG_FORMAT, env, destination: options.destination });
  const registry = serviceRegistry(service);
  const metrics =
    options.metricsPort !== false && config.BERTH_METRICS_PORT !== undefined
      ? await startMetricsServer(registry, { port: config.BERTH_METRICS_PORT, host: config.BERTH_METRICS_HOST })
      : null;
  return {
    log,
    pino,
    registry,
    tracing,
    metrics,
    async shutdown() {
      await metrics?.close();
      await tracing.shutdown();
    },
  };
}
