import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as a test looks at it: which service recorded it and where it sits in its trace. */
export type ReceivedSpan = Readonly<{
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Readonly<Record<string, unknown>>;
}>;

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };
type ExportRequest = {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind?: number; attributes?: KeyValue[] }[] }[];
  }[];
};

const valueOf = (v: AnyValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.boolValue ?? v.doubleValue));
const attributesOf = (list: KeyValue[] = []): Record<string, unknown> => Object.fromEntries(list.map((a) => [a.key, valueOf(a.value)]));

/**
 * A stand-in OpenTelemetry collector on loopback: accepts OTLP/HTTP JSON trace exports
 * (`POST /v1/traces`, what @opentelemetry/exporter-trace-otlp-http sends) from the services a
 * test starts and keeps the spans in memory, so a test can follow one trace across processes.
 */
export class OtlpTraceReceiver {
  readonly spans: ReceivedSpan[] = [];
  private server: Server | null = null;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') {
          res.writeHead(404).end();
          return;
        }
        try {
          this.collect(JSON.parse(body) as ExportRequest);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch {
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private collect(request: ExportRequest): void {
    for (const rs of request.resourceSpans ?? []) {
      const service = String(attributesOf(rs.resource?.attributes)['service.name'] ?? '');
      for (const ss of rs.scopeSpans ?? []) {
        for (const span of ss.spans ?? []) {
          this.spans.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || null,
            name: span.name,
            kind: span.kind ?? 0,
            attributes: attributesOf(span.attributes),
          });
        }
      }
    }
  }
}
