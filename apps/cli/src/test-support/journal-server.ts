import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny stand-in for the gateway's event stream, for tests: serves `events` as SSE after the
 * requested cursor (`?after=` / `Last-Event-ID`), and can cut the connection after a number of
 * events to play a dropped network. Other routes answer through `route`.
 */
export type StreamEvent = { seq: number; event: Record<string, unknown> };

export type JournalServerOptions = {
  events: StreamEvent[];
  /** For connection n (0-based): how many events to send before destroying the socket; undefined = stay open. */
  dropAfter?: (connection: number) => number | undefined;
  /** Extra events the server repeats before the cursor (a sloppy replay the client must dedupe). */
  overlap?: number;
  route?: (req: IncomingMessage, res: ServerResponse, body: string) => boolean;
};

export type StreamRequest = { after: string | null; lastEventId: string | null; apiKey: string | null };

export class JournalServer {
  readonly requests: StreamRequest[] = [];
  private readonly open = new Set<ServerResponse>();
  private server!: Server;
  url = '';

  constructor(private readonly opts: JournalServerOptions) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => this.handle(req, res, body));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Appends an event and sends it to every open stream (a live tail). */
  push(e: StreamEvent): void {
    this.opts.events.push(e);
    for (const res of this.open) res.write(frame(e));
  }

  async stop(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse, body: string): void {
    const url = new URL(req.url ?? '/', 'http://x');
    if (this.opts.route?.(req, res, body)) return;
    if (!url.pathname.endsWith('/events/stream')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: 'no such route', code: 'NOT_FOUND' } }));
      return;
    }
    const connection = this.requests.length;
    const lastEventId = (req.headers['last-event-id'] as string | undefined) ?? null;
    this.requests.push({ after: url.searchParams.get('after'), lastEventId, apiKey: (req.headers['x-api-key'] as string | undefined) ?? null });
    const cursor = Number(url.searchParams.get('after') ?? lastEventId ?? 0) - (this.opts.overlap ?? 0);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(': connected\n\n');
    const backlog = this.opts.events.filter((e) => e.seq > cursor);
    const limit = this.opts.dropAfter?.(connection);
    if (limit !== undefined) {
      res.write(backlog.slice(0, limit).map(frame).join(''));
      // Half a frame then a reset: what a dropped connection looks like to the client.
      res.write('id: 999\ndata: {"trunc');
      setImmediate(() => res.socket?.destroy());
      return;
    }
    for (const e of backlog) res.write(frame(e));
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
  }
}

export const frame = (e: StreamEvent) => `id: ${e.seq}\ndata: ${JSON.stringify(e.event)}\n\n`;

export const makeEvents = (n: number, from = 1): StreamEvent[] =>
  Array.from({ length: n }, (_, i) => ({ seq: from + i, event: { id: `sevt_${from + i}`, type: 'agent.message', processed_at: '2026-11-30T00:00:00.000Z', content: [{ type: 'text', text: `m${from + i}` }] } }));
