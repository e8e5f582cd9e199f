import { secondsSince, traceContextOf, type HttpMetrics } from '@berth/telemetry';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Request, RequestHandler } from 'express';

/** The route template a request matched (`/v1/sessions/{session_id}`), so labels stay few. */
export function routeOf(req: Request): string {
  const path = (req.route as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string') return `${req.baseUrl}${path}`.replace(/:(\w+)/g, '{$1}');
  if (req.originalUrl.startsWith('/console')) return '/console';
  return req.originalUrl.split('?')[0] === '/metrics' ? '/metrics' : 'unmatched';
}

/**
 * One SERVER span and one latency observation per request. The span continues a caller's
 * `traceparent` and is active while Nest handles the request, so the commands the gateway
 * publishes (and everything downstream) join the caller's trace.
 */
export function httpTelemetry(metrics: HttpMetrics): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    const parent = traceContextOf(req.headers);
    const span = trace.getTracer('berth').startSpan(req.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'url.path': req.path } }, parent);
    let ended = false;
    const end = (): void => {
      if (ended) return;
      ended = true;
      const route = routeOf(req);
      metrics.requestDuration.observe({ method: req.method, route, status: String(res.statusCode) }, secondsSince(start));
      span.updateName(`${req.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode });
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    context.with(trace.setSpan(parent, span), next);
  };
}
