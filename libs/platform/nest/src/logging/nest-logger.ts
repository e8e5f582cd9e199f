import type { Logger } from '@berth/ports';
import type { LoggerService } from '@nestjs/common';

/** Nest's own start-up chatter (modules loaded, routes mapped): debug, not an event worth a line. */
const BOOT_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory', 'NestApplication', 'NestMicroservice']);

const text = (message: unknown): string => (typeof message === 'string' ? message : message instanceof Error ? message.message : JSON.stringify(message));

/**
 * Nest's logger interface over the logging port, so framework lines are JSON lines of the same
 * service like every other (Nest passes the context, e.g. `RouterExplorer`, as the last argument).
 */
export function nestLogger(log: Logger): LoggerService {
  const context = (params: unknown[]): { context?: string } => (typeof params[params.length - 1] === 'string' ? { context: params[params.length - 1] as string } : {});
  return {
    log: (message: unknown, ...params: unknown[]) => {
      const fields = context(params);
      if (fields.context !== undefined && BOOT_CONTEXTS.has(fields.context)) log.debug(text(message), fields);
      else log.info(text(message), fields);
    },
    error: (message: unknown, ...params: unknown[]) => {
      // Nest calls error(message, stack, context).
      const stack = params.length > 1 && typeof params[0] === 'string' ? { stack: params[0] } : {};
      log.error(text(message), { ...context(params), ...stack });
    },
    warn: (message: unknown, ...params: unknown[]) => log.warn(text(message), context(params)),
    debug: (message: unknown, ...params: unknown[]) => log.debug(text(message), context(params)),
    verbose: (message: unknown, ...params: unknown[]) => log.debug(text(message), context(params)),
    fatal: (message: unknown, ...params: unknown[]) => log.error(text(message), { ...context(params), fatal: true }),
  };
}
