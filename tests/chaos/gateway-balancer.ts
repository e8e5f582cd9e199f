import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * What sits in front of gateway replicas in a deployment, on loopback: a TCP balancer that hands
 * each new connection to the next backend that accepts it (round robin, skipping one that refuses).
 * An SSE client whose gateway dies reconnects through it and lands on another replica.
 */
export class GatewayBalancer {
  private readonly backends = new Set<number>();
  private next = 0;
  private server: Server | null = null;

  constructor(readonly port: number) {}

  add(port: number): void {
    this.backends.add(port);
  }

  remove(port: number): void {
    this.backends.delete(port);
  }

  async start(): Promise<this> {
    const server = createServer((client) => this.route(client, [...this.backends], this.next++, 0));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    return this;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private route(client: Socket, ports: readonly number[], first: number, tried: number): void {
    if (tried >= ports.length) {
      client.destroy();
      return;
    }
    const port = ports[(first + tried) % ports.length] as number;
    const upstream = createConnection({ port, host: '127.0.0.1' });
    let connected = false;
    client.pause();
    upstream.once('connect', () => {
      connected = true;
      client.pipe(upstream).pipe(client);
      client.resume();
    });
    upstream.on('error', () => {
      if (connected) client.destroy();
      else this.route(client, ports, first, tried + 1);
    });
    upstream.once('close', () => connected && client.destroy());
    client.on('error', () => upstream.destroy());
    client.once('close', () => upstream.destroy());
  }
}
