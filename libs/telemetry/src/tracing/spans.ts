import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

/** The tracer every Berth component records with (the service is on the resource). */
const tracer = () => trace.getTracer('berth');

/**
 * Runs `work` inside a span that ends when it settles (an error marks it failed and is rethrown).
 * Used where a unit of work is worth seeing in a trace: a command, an event's handling, a turn.
 */
export function inSpan<T>(name: string, options: Readonly<{ kind?: SpanKind; attributes?: Attributes; parent?: Context }>, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes }, options.parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A trace context held on to, for work that starts later from somewhere else (`inSpan`'s `parent`). */
export type TraceContext = Context;

/** The trace context active here (the root context outside any span). */
export const activeTraceContext = (): TraceContext => context.active();

/** Adds the active trace context (`traceparent`, `tracestate`) to outgoing message headers. */
export function withTraceHeaders(headers: Readonly<Record<string, string>> = {}): Record<string, string> {
  const out: Record<string, string> = { ...headers };
  propagation.inject(context.active(), out);
  return out;
}

/** The trace context an incoming message or request carries (the root context when none). */
export const traceContextOf = (headers: Readonly<Record<string, string | string[] | undefined>>): Context => propagation.extract(ROOT_CONTEXT, headers);

export { SpanKind };
