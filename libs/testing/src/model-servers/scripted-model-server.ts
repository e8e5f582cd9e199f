import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { parseBody, scrubHeaders, type RecordedRequest } from './recorded-request';
import { reply, type ScriptedReply } from './scripted-reply';

/**
 * A model server on 127.0.0.1 that answers generation requests from a queue of scripted replies
 * (then a default reply) and records every request it receives. Subclasses speak one wire API.
 */
export abstract class ScriptedModelServer {
  private readonly server: Server = createServer((req, res) => void this.receive(req, res));
  private readonly queue: ScriptedReply[] = [];
  private readonly keyed: { match: string; queue: ScriptedReply[] }[] = [];
  private fallback: ScriptedReply = reply.text('OK');
  private readonly recorded: RecordedRequest[] = [];
  private readonly unanswered: RecordedRequest[] = [];
  /** sha256 of every credential header value received (recorded requests carry `[redacted]` instead). */
  private readonly credentials = new Set<string>();

  /** Every request received, oldest first. */
  get requests(): readonly RecordedRequest[] {
    return this.recorded;
  }

  /** The requests that asked the model to generate (each consumed one scripted reply). */
  get modelRequests(): readonly RecordedRequest[] {
    return this.recorded.filter((r) => this.isGeneration(r));
  }

  /** Requests for routes this server does not script (answered 404): a harness calling something new. */
  get unroutedRequests(): readonly RecordedRequest[] {
    return this.unanswered;
  }

  /**
   * Whether some request carried `key` as its credential (`x-api-key: key` or `Authorization:
   * Bearer key`). Compared by hash, so the key never ends up in a test's output.
   */
  sawCredential(key: string): boolean {
    return this.credentials.has(digest(key)) || this.credentials.has(digest(`Bearer ${key}`));
  }

  /** Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash, no `/v1`). */
  get url(): string {
    const address = this.server.address() as AddressInfo | null;
    if (address === null) throw new Error('model server is not listening; call start() first');
    return `http://127.0.0.1:${address.port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => resolve());
    });
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Queue replies; each generation request takes the next one. */
  script(...replies: ScriptedReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /**
   * Queue replies for the requests whose latest user text contains `match` (a tool result is not
   * text, so a turn's follow-up requests still carry its prompt): several conversations, or a
   * turn that never asked, cannot take each other's replies. Checked before the plain queue.
   */
  scriptFor(match: string, ...replies: ScriptedReply[]): this {
    this.keyed.push({ match, queue: [...replies] });
    return this;
  }

  /** The reply used once the queue is empty (initially the text "OK"). */
  setDefaultReply(next: ScriptedReply): this {
    this.fallback = next;
    return this;
  }

  /** How many scripted replies have not been used yet. */
  get pending(): number {
    return this.queue.length;
  }

  /** Resolves once `count` generation requests arrived; rejects after `timeoutMs`. */
  async waitForModelRequests(count: number, timeoutMs = 10_000): Promise<readonly RecordedRequest[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.modelRequests.length < count) {
      if (Date.now() > deadline) {
        throw new Error(`expected ${count} model requests within ${timeoutMs} ms, got ${this.modelRequests.length}`);
      }
      await delay(20);
    }
    return this.modelRequests;
  }

  /** Answers a route the server does not script with the API's 404 body, and remembers it. */
  protected notFound(request: RecordedRequest, res: ServerResponse, body: unknown): void {
    this.unanswered.push(request);
    sendJson(res, 404, body);
  }

  protected nextReply(request?: RecordedRequest): ScriptedReply {
    const text = request === undefined ? null : this.latestUserText(request);
    const keyed = text === null ? undefined : this.keyed.find((k) => k.queue.length > 0 && text.includes(k.match));
    return keyed?.queue.shift() ?? this.queue.shift() ?? this.fallback;
  }

  /** The text of the request's latest user message that has any (null when the wire API gives none). */
  protected latestUserText(_request: RecordedRequest): string | null {
    return null;
  }

  /** True for requests that consume a scripted reply. */
  protected abstract isGeneration(request: RecordedRequest): boolean;

  protected abstract respond(request: RecordedRequest, res: ServerResponse): Promise<void>;

  private async receive(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    for (const name of ['x-api-key', 'authorization']) {
      const value = req.headers[name];
      if (typeof value === 'string') this.credentials.add(digest(value));
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const request: RecordedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: scrubHeaders(req.headers),
      body: parseBody(Buffer.concat(chunks).toString('utf8')),
      receivedAt: new Date(),
    };
    this.recorded.push(request);
    try {
      await this.respond(request, res);
    } catch (error) {
      // A scripted server must never hang a client: report our own bugs as a 500 the test can see.
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error) } });
      res.end();
    }
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** One server-sent event. */
export interface SseEvent {
  readonly event: string;
  readonly data: unknown;
  /** Pause this long before sending it (slow streams). */
  readonly delayMs?: number;
}

/** Streams events as SSE; stops quietly when the client goes away (an interrupted harness). */
export async function streamSse(res: ServerResponse, events: readonly SseEvent[], headers: Record<string, string> = {}): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive', ...headers });
  let gone = false;
  res.once('close', () => (gone = true));
  for (const { event, data, delayMs } of events) {
    if (delayMs) await delay(delayMs);
    if (gone) return;
    res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }
  res.end();
}

const digest = (value: string): string => createHash('sha256').update(value).digest('hex');
