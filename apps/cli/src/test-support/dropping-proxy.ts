import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP proxy in front of the gateway that breaks event streams on purpose: the first
 * `drops.length` stream connections are cut after `drops[n]` SSE frames (mid-frame), the way a
 * flaky network or a restarted load balancer would. Everything else passes through untouched.
 */
export class DroppingProxy {
  streamConnections = 0;
  cuts = 0;
  private server!: Server;
  url = '';

  constructor(
    private readonly upstream: string,
    private readonly drops: readonly number[],
  ) {}

  async start(): Promise<this> {
    const up = new URL(this.upstream);
    this.server = createServer((req, res) => {
      const isStream = (req.url ?? '').includes('/events/stream');
      const n = isStream ? this.streamConnections++ : -1;
      const limit = isStream ? this.drops[n] : undefined;
      const proxied = request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers }, (upRes) => {
        res.writeHead(upRes.statusCode ?? 502, upRes.headers);
        if (limit === undefined) {
          upRes.pipe(res);
          return;
        }
        let frames = 0;
        let pending = '';
        upRes.setEncoding('utf8');
        upRes.on('data', (chunk: string) => {
          pending += chunk;
          let boundary: number;
          while ((boundary = pending.indexOf('\n\n')) !== -1) {
            const frame = pending.slice(0, boundary + 2);
            pending = pending.slice(boundary + 2);
            res.write(frame);
            if (!frame.startsWith(':') && ++frames === limit) {
              // Half a frame, then the cut: the client must discard what it half-received.
              this.cuts++;
              upRes.destroy();
              res.write('id: 99999\ndata: {"trunc', () => res.socket?.destroy());
              return;
            }
          }
        });
        upRes.on('end', () => res.end());
      });
      proxied.on('error', () => res.destroy());
      res.on('close', () => proxied.destroy());
      req.pipe(proxied);
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((r) => this.server.close(() => r()));
  }
}
