import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/** The egress marks its own refusals with this header (`apps/egress`); a destination's own 403 lacks it. */
const DENIED_HEADER = 'x-berth-egress-denied:';
const FORBIDDEN = 'HTTP/1.1 403 ';

/**
 * A loopback port on the manager's host that forwards each connection to one sandbox's egress
 * socket, so a clone made for the sandbox goes out exactly as the sandbox's own traffic does: the
 * egress takes the socket as the sandbox's identity and applies its environment's policy (no
 * loopback, private or platform addresses; only allowed hosts in a `limited` environment). It
 * lives for one clone. Answers the egress itself refuses are noted, so the clone's failure can
 * say what the egress said instead of git's "403".
 */
export class EgressRelay {
  private readonly sockets = new Set<Socket>();
  private refusal: string | null = null;

  private constructor(
    private readonly server: Server,
    private readonly socketPath: string,
  ) {
    server.on('connection', (client) => this.relay(client));
  }

  static async open(socketPath: string): Promise<EgressRelay> {
    const server = createServer();
    const relay = new EgressRelay(server, socketPath);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return relay;
  }

  /** `http.proxy` for git. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The body of the first refusal the egress answered through this relay, if any. */
  get refused(): string | null {
    return this.refusal;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket): void {
    const egress = connect(this.socketPath);
    this.sockets.add(client).add(egress);
    const done = () => {
      client.destroy();
      egress.destroy();
      this.sockets.delete(client);
      this.sockets.delete(egress);
    };
    client.on('error', done).on('close', done);
    egress.on('error', done).on('close', done);
    egress.on('data', (chunk: Buffer) => this.note(chunk));
    client.pipe(egress);
    egress.pipe(client);
  }

  /** The egress writes a refusal's head and body at once: a chunk that starts one carries it. */
  private note(chunk: Buffer): void {
    if (this.refusal !== null || chunk.length < FORBIDDEN.length || chunk.toString('latin1', 0, FORBIDDEN.length) !== FORBIDDEN) return;
    const text = chunk.toString('utf8');
    const end = text.indexOf('\r\n\r\n');
    const head = end === -1 ? '' : text.slice(0, end).toLowerCase();
    if (!head.includes(`\r\n${DENIED_HEADER}`)) return;
    const body = text.slice(end + 4);
    this.refusal = (head.includes('\r\ntransfer-encoding: chunked') ? unchunked(body) : body).trim() || 'refused by the egress';
  }
}

/** The data of a chunked body (as far as this chunk holds it). */
function unchunked(body: string): string {
  let out = '';
  let rest = body;
  for (;;) {
    const line = rest.indexOf('\r\n');
    const size = line === -1 ? 0 : parseInt(rest.slice(0, line), 16);
    if (!(size > 0)) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}
