import type { Logger, LogFields } from '@berth/ports';
import { trace } from '@opentelemetry/api';
import pino, { type DestinationStream, type Logger as Pino, type LevelWithSilent } from 'pino';
import pretty from 'pino-pretty';
import { secretScrubber, secretValuesOf, type Scrub } from './secret-scrubber';

export type LogFormat = 'json' | 'pretty';

export type LoggerOptions = Readonly<{
  /** `service` field of every line: gateway, session-kernel, sandbox-manager, turn-reconciler, … */
  service: string;
  level?: LevelWithSilent;
  /** Pretty only on a terminal by default; JSON lines everywhere else. */
  format?: LogFormat;
  /** Where lines go (stdout by default). */
  destination?: Readonly<{ write(line: string): unknown }>;
  /** The process environment: its secret values are scrubbed from every line. */
  env?: Readonly<Record<string, string | undefined>>;
}>;

/** What a service logs with: the port for its own code, and pino itself for framework adapters (pino-http). */
export type ServiceLogger = Readonly<{ log: Logger; pino: Pino }>;

/**
 * A pino logger writing one JSON object per line with `time` (ISO), `level` (a word), `service`,
 * `msg`, the caller's fields, and `trace_id`/`span_id` when a span is active. Every line passes
 * through the secret scrubber before it is written, pretty or not.
 */
export function createLogger(options: LoggerOptions): ServiceLogger {
  const env = options.env ?? process.env;
  const scrub = secretScrubber(secretValuesOf(env));
  const format = options.format ?? (process.stdout.isTTY ? 'pretty' : 'json');
  const out = options.destination ?? process.stdout;
  const target: DestinationStream =
    format === 'pretty' ? scrubbing(scrub, pretty({ colorize: true, sync: true, singleLine: true, ignore: 'pid,hostname,service' })) : scrubbing(scrub, out);
  const instance = pino(
    {
      level: options.level ?? 'info',
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: pino.stdSerializers.err },
      // Headers a request logger might see; the scrubber would catch the values, this keeps the keys readable.
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'], censor: '[REDACTED]' },
      mixin: activeSpanIds,
    },
    target,
  );
  return { log: new PinoLogger(instance), pino: instance };
}

function activeSpanIds(): Record<string, string> {
  const context = trace.getActiveSpan()?.spanContext();
  return context && context.traceId !== '00000000000000000000000000000000' ? { trace_id: context.traceId, span_id: context.spanId } : {};
}

const scrubbing = (scrub: Scrub, next: Readonly<{ write(line: string): unknown }>): DestinationStream => ({ write: (line: string) => void next.write(scrub(line)) });

/** The logging port over pino (`message` last, as the port has it; pino wants the fields first). */
class PinoLogger implements Logger {
  constructor(private readonly p: Pino) {}
  debug(message: string, fields?: LogFields): void {
    this.p.debug(fields ?? {}, message);
  }
  info(message: string, fields?: LogFields): void {
    this.p.info(fields ?? {}, message);
  }
  warn(message: string, fields?: LogFields): void {
    this.p.warn(fields ?? {}, message);
  }
  error(message: string, fields?: LogFields): void {
    this.p.error(fields ?? {}, message);
  }
  child(fields: LogFields): Logger {
    return new PinoLogger(this.p.child(fields));
  }
}
