import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * What a test host answers: status and body for any path, or whatever a server the test started on
 * loopback answers (`origin`, e.g. `http://127.0.0.1:4321`: the request goes there as it came, with
 * its method, path, headers and body), so a test can give a real service a public-looking name.
 */
export type TestHostReply = Readonly<{ status?: number; body: string }> | Readonly<{ origin: string }> | TestTcpHost;

/**
 * A host whose CONNECT tunnels are joined, as raw TCP, to a server the test started on loopback
 * (`address`, e.g. `127.0.0.1:4321`): an HTTPS server with its own certificate, so a client
 * through the proxy does the TLS with it end to end. Plain HTTP to the host gets a 502.
 */
export type TestTcpHost = Readonly<{ tcp: string }>;

/** One request the proxy saw, by the host it named. */
export type ProxiedRequest = Readonly<{ kind: 'http' | 'connect'; host: string; port: number; path: string | null; served: boolean; proxyAuthorization: string | null }>;

/**
 * An upstream HTTP proxy on 127.0.0.1 standing in for "the internet" in tests: it serves the
 * test hosts it was given (plain HTTP in absolute form, and CONNECT tunnels in which it speaks
 * plain HTTP too) and answers everything else with 502 without connecting anywhere. Pointing the
 * egress's BERTH_EGRESS_UPSTREAM_PROXY here keeps a test's traffic on this machine, and
 * `requests` shows every destination a sandbox asked for.
 */
export class ScriptedUpstreamProxy {
  readonly requests: ProxiedRequest[] = [];
  private readonly hosts = new Map<string, TestHostReply>();
  private readonly joined = new Set<Socket>();
  private readonly server: Server = createServer((req, res) => this.onRequest(req, res));
  /** Serves the plain HTTP spoken inside CONNECT tunnels. */
  private readonly inner: Server = createServer((req, res) => this.answer(req.headers.host?.split(':')[0] ?? '', res, req));

  constructor(hosts: Readonly<Record<string, TestHostReply>> = {}) {
    for (const [host, reply] of Object.entries(hosts)) this.hosts.set(host.toLowerCase(), reply);
    this.server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onConnect(req, socket as Socket, head));
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    this.inner.closeAllConnections();
    for (const socket of this.joined) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private onRequest(req: IncomingMessage, res: ServerResponse): void {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute-form only\n');
      return;
    }
    const host = url.hostname.toLowerCase();
    this.requests.push({ kind: 'http', host, port: Number(url.port || 80), path: url.pathname, served: this.hosts.has(host), proxyAuthorization: header(req, 'proxy-authorization') });
    this.answer(host, res, req);
  }

  private onConnect(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const [host = '', port = '0'] = (req.url ?? '').split(':');
    const served = this.hosts.has(host.toLowerCase());
    this.requests.push({ kind: 'connect', host: host.toLowerCase(), port: Number(port), path: null, served, proxyAuthorization: header(req, 'proxy-authorization') });
    if (!served) {
      socket.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
      return;
    }
    const reply = this.hosts.get(host.toLowerCase());
    if (reply !== undefined && 'tcp' in reply) return this.join(reply, socket, head);
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    this.inner.emit('connection', socket);
  }

  private join(reply: TestTcpHost, socket: Socket, head: Buffer): void {
    const colon = reply.tcp.lastIndexOf(':');
    const target = connect({ host: reply.tcp.slice(0, colon), port: Number(reply.tcp.slice(colon + 1)) }, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) target.write(head);
      target.pipe(socket);
      socket.pipe(target);
    });
    target.on('error', () => (socket.writable ? socket.end('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n') : socket.destroy()));
    socket.on('error', () => target.destroy());
    this.joined.add(socket);
    socket.on('close', () => {
      this.joined.delete(socket);
      target.destroy();
    });
  }

  private answer(host: string, res: ServerResponse, req: IncomingMessage): void {
    const reply = this.hosts.get(host);
    if (reply === undefined) {
      req.resume();
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`not a test host: ${host}\n`);
      return;
    }
    if ('tcp' in reply) {
      req.resume();
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`${host} is served through CONNECT only\n`);
      return;
    }
    if ('origin' in reply) return this.forward(reply.origin, req, res);
    req.resume();
    res.writeHead(reply.status ?? 200, { 'content-type': 'text/plain' }).end(reply.body);
  }

  private forward(origin: string, req: IncomingMessage, res: ServerResponse): void {
    const target = new URL(origin);
    const url = new URL(req.url ?? '/', 'http://placeholder');
    const headers = { ...req.headers };
    delete headers['proxy-authorization'];
    delete headers['proxy-connection'];
    const upstream = request({ host: target.hostname, port: target.port, method: req.method, path: `${url.pathname}${url.search}`, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', (error) => (res.headersSent ? res.destroy() : res.writeHead(502, { 'content-type': 'text/plain' }).end(`origin ${origin} failed: ${error.message}\n`)));
    req.pipe(upstream);
  }
}

const header = (req: IncomingMessage, name: string): string | null => {
  const value = req.headers[name];
  return typeof value === 'string' ? value : null;
};
