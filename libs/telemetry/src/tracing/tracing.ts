import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, SimpleSpanProcessor, TracerProvider, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace';

export type TracingOptions = Readonly<{
  service: string;
  /** Spans go here as they end (tests: an InMemorySpanExporter). */
  exporter?: SpanExporter;
  /** The process environment: OTLP export is on when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set. */
  env?: Readonly<Record<string, string | undefined>>;
}>;

export type Tracing = Readonly<{
  tracer: Tracer;
  /** True when spans are recorded and exported somewhere. */
  exporting: boolean;
  /** Flushes what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}>;

/**
 * Sets up OpenTelemetry for one process: async-local context (so a span follows its request or
 * message across awaits and timers), W3C `traceparent` propagation (HTTP headers and NATS message
 * headers), and, when an exporter is configured, a tracer provider whose spans carry the service
 * name. Without one, spans are free no-ops but an incoming `traceparent` still flows on, so a
 * trace stays whole across a process that does not export.
 */
export function startTracing(options: TracingOptions): Tracing {
  const env = options.env ?? process.env;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const processors: SpanProcessor[] = [];
  if (options.exporter) processors.push(new SimpleSpanProcessor({ exporter: options.exporter }));
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT) processors.push(new BatchSpanProcessor({ exporter: new OTLPTraceExporter() }));
  if (processors.length === 0) return { tracer: trace.getTracer('berth'), exporting: false, shutdown: async () => undefined };
  const provider = new TracerProvider({ resource: resourceFromAttributes({ 'service.name': options.service }), spanProcessors: processors });
  trace.setGlobalTracerProvider(provider);
  return { tracer: trace.getTracer('berth'), exporting: true, shutdown: () => provider.shutdown() };
}
