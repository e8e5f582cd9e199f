import { request, type ClientRequest, type IncomingMessage } from 'node:http';

export type SeenFrame = Readonly<{ seq: number; event: string; data: unknown; connection: number }>;

/**
 * A raw SSE reader of one session's stream that records every frame it sees and, whenever the
 * stream drops (gateway killed, broker restart), reconnects with `Last-Event-ID` set to the last
 * seq it saw. Frames seen twice across reconnects are kept: the invariant dedupes by id.
 */
export class SseRecorder {
  readonly frames: SeenFrame[] = [];
  connections = 0;
  private lastSeq = 0;
  private stopped = false;
  private current: ClientRequest | null = null;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string,
    readonly sessionId: string,
  ) {}

  start(): this {
    this.loop ??= this.run();
    return this;
  }

  /** The highest seq seen so far. */
  get last(): number {
    return this.lastSeq;
  }

  /** Resolves once a frame with seq ≥ `seq` was seen; false when `timeoutMs` passes first. */
  async waitForSeq(seq: number, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.lastSeq < seq) {
      if (Date.now() > deadline) return false;
      await new Promise((r) => setTimeout(r, 50));
    }
    return true;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.destroy();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.connectOnce();
      } catch {
        // refused or dropped: reconnect below
      }
      if (!this.stopped) await new Promise((r) => setTimeout(r, 200));
    }
  }

  private connectOnce(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const url = new URL(`/v1/sessions/${this.sessionId}/events/stream`, this.baseUrl);
      // Last-Event-ID 0 on the first connection too: replay the whole journal, then tail.
      const headers = { accept: 'text/event-stream', 'x-api-key': this.apiKey, 'last-event-id': String(this.lastSeq) };
      const req = request(url, { headers }, (res: IncomingMessage) => {
        if (res.statusCode !== 200) {
          res.resume();
          res.once('end', () => reject(new Error(`stream answered ${res.statusCode}`)));
          return;
        }
        const connection = ++this.connections;
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let split: number;
          while ((split = buffer.indexOf('\n\n')) !== -1) {
            this.onBlock(buffer.slice(0, split), connection);
            buffer = buffer.slice(split + 2);
          }
        });
        res.once('end', () => resolve());
        res.once('error', reject);
        res.once('aborted', () => resolve());
      });
      req.once('error', reject);
      req.once('close', () => resolve());
      this.current = req;
      req.end();
    });
  }

  private onBlock(block: string, connection: number): void {
    let id: string | null = null;
    let event = '';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (id === null || data.length === 0) return;
    const seq = Number(id);
    this.frames.push({ seq, event, data: JSON.parse(data.join('\n')), connection });
    if (seq > this.lastSeq) this.lastSeq = seq;
  }
}
