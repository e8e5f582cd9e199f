import { Agent, createServer, request as httpRequest, type ClientRequestArgs, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { connect as tlsConnect, createSecureContext, rootCertificates, TLSSocket, type SecureContext } from 'node:tls';
import { endToEndHeaders, parseTunnelledTarget, withCredential, withVariables, type EgressDenial, type Target } from '@berth/egress-domain';
import type { Clock } from '@berth/core';
import type { Logger } from '@berth/ports';
import { credentialNow, type ContextReader } from '../context/current-credential';
import type { Destinations, Route } from '../proxy/destinations';
import { answerText, DENIED_HEADER, relayRequest } from '../proxy/relay-request';
import { bodyWithVariables, tooLargeMessage } from '../proxy/variable-body';
import type { LeafCertificates } from './leaf-certificates';

/**
 * What a terminated tunnel was allowed for: its destination and route, decided at CONNECT time
 * before the sandbox got its 200. The credentials are the session's as each request inside finds
 * them (`context`: a token refreshed while the tunnel is open is the next request's). `report`
 * tells the session about a request refused inside it (an expired credential's).
 */
export type TunnelGrant = Readonly<{
  sessionId: string;
  target: Target;
  route: Route;
  context: ContextReader;
  report: (denial: EgressDenial) => void;
}>;

export type TerminatedTunnelsDeps = Readonly<{
  leaves: LeafCertificates;
  destinations: Destinations;
  /** Extra CAs an upstream's certificate may chain to besides the public roots (`BERTH_EGRESS_UPSTREAM_CA_FILE`: tests, an internal CA). */
  upstreamCa: readonly string[];
  connectTimeoutMs: number;
  /** Tells an `mcp_oauth` token past its `expires_at` (checked per request: a tunnel outlives its CONNECT). */
  clock: Clock;
  log: Logger;
}>;

const ALPN = ['http/1.1'];

/**
 * TLS termination for the hosts a session's vault credentials are bound to (`terminatesTls`,
 * `variableTerminatesTls`): the
 * egress answers the CONNECT itself with a certificate its CA issued for that host, reads the
 * requests inside, adds the credential to those under the credential's URL (and variable credentials' secrets in place of their placeholders), and sends each on over
 * a new TLS connection to the real host, whose certificate must verify against the public roots
 * (and `upstreamCa`) for that host name. The destination is the CONNECT's, whatever a request's
 * `Host` says. Upstream connections are kept alive per sandbox connection and closed with it.
 */
export class TerminatedTunnels {
  private readonly server: Server;
  private readonly grants = new WeakMap<Duplex, { grant: TunnelGrant; agent: Agent }>();
  /** Built once: parsing the public roots for every upstream connection costs ~20 ms a handshake. */
  private readonly upstreamContext: SecureContext | undefined;

  constructor(private readonly deps: TerminatedTunnelsDeps) {
    this.upstreamContext = deps.upstreamCa.length === 0 ? undefined : createSecureContext({ ca: [...rootCertificates, ...deps.upstreamCa], minVersion: 'TLSv1.2' });
    this.server = createServer((req, res) =>
      void this.handle(req, res).catch((error: unknown) => {
        deps.log.error('a request in a terminated tunnel failed', { err: error });
        answerText(res, 500, 'Berth egress: internal error (see the egress log).');
      }),
    );
    this.server.on('clientError', (_error, socket) => socket.destroy());
  }

  /** Takes over a CONNECT the policy allowed: 200, then TLS with the host's leaf certificate, then HTTP. */
  async terminate(socket: Socket, head: Buffer, grant: TunnelGrant): Promise<void> {
    const secureContext = await this.deps.leaves.contextFor(grant.target.host);
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    const tls = new TLSSocket(socket, { isServer: true, secureContext, ALPNProtocols: ALPN });
    const agent = this.agentFor(grant);
    this.grants.set(tls, { grant, agent });
    // A handshake that never completes usually means a client that does not trust the egress's CA
    // (its variable unset or overridden): it sends an alert (an error here) or just hangs up.
    let secured = false;
    let failure: (Error & { code?: string }) | null = null;
    tls.once('secure', () => (secured = true));
    tls.once('error', (error: Error & { code?: string }) => {
      failure = error;
      tls.destroy();
    });
    tls.once('close', () => {
      if (!secured) this.deps.log.warn('the TLS handshake with a sandbox client failed', { session_id: grant.sessionId, host: grant.target.host, port: grant.target.port, code: failure?.code ?? null, err: failure?.message ?? 'the client closed the connection' });
      agent.destroy();
      socket.destroy();
    });
    this.server.emit('connection', tls);
  }

  close(): void {
    this.server.closeAllConnections();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const entry = this.grants.get(req.socket);
    if (entry === undefined) return void req.socket.destroy();
    const { grant, agent } = entry;
    const authority = grant.target.port === 443 ? grant.target.host : `${grant.target.host}:${grant.target.port}`;
    const target = parseTunnelledTarget(grant.target, req.url ?? '');
    if (target === null) return answerText(res, 400, `Berth egress: a request inside the tunnel to ${authority} needs an origin-form path.`);
    const now = await credentialNow(grant.context, target, () => this.deps.clock.now());
    if (now === null) return answerText(res, 403, `Berth egress: the sandbox is no longer the session's bound sandbox.`, { [DENIED_HEADER]: 'unbound_sandbox', connection: 'close' });
    const { credential, expired, context } = now;
    if (expired !== null) {
      grant.report(expired);
      return answerText(res, 403, expired.message, { [DENIED_HEADER]: expired.reason });
    }
    const body = await bodyWithVariables(req, context.variables, grant.target.host);
    if (body === 'too_large') return answerText(res, 413, tooLargeMessage, { connection: 'close' });
    const sent = { ...withVariables(endToEndHeaders(req.headers, new Set(['host'])), context.variables, grant.target.host), host: authority, ...(body === null ? {} : { 'content-length': String(body.length) }) };
    const headers = credential === null ? sent : withCredential(sent, credential);
    relayRequest(() => httpRequest({ host: grant.target.host, port: grant.target.port, path: target.pathAndQuery, method: req.method, headers, agent }), req, res, {
      connectTimeoutMs: this.deps.connectTimeoutMs,
      body: body ?? undefined,
      onError: (error) => answerText(res, 502, `Berth egress could not reach https://${authority}: ${describeUpstreamError(error)}`),
    });
  }

  private agentFor(grant: TunnelGrant): Agent {
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    // One upstream TLS connection per socket the agent asks for, through the grant's route (the pinned address or the upstream proxy).
    const connectUpstream = (_options: ClientRequestArgs, done: (error: Error | null, socket?: Duplex) => void): undefined => {
      this.connectUpstream(grant).then(
        (socket) => done(null, socket),
        (error: Error) => done(error),
      );
      return undefined;
    };
    (agent as unknown as { createConnection: typeof connectUpstream }).createConnection = connectUpstream;
    return agent;
  }

  private async connectUpstream(grant: TunnelGrant): Promise<TLSSocket> {
    const { host, port } = grant.target;
    const raw = await this.deps.destinations.tunnel(grant.route, host, port);
    // A request leaves as several small TLS records: without this, Nagle's algorithm and the peer's
    // delayed ACK hold the last one back ~40 ms (measured: bench/egress-tls.ts).
    raw.setNoDelay(true);
    return new Promise((resolve, reject) => {
      const tls = tlsConnect({ socket: raw, servername: isIP(host) === 0 ? host : undefined, host, secureContext: this.upstreamContext, minVersion: 'TLSv1.2', ALPNProtocols: ALPN, rejectUnauthorized: true });
      const timer = setTimeout(() => tls.destroy(Object.assign(new Error(`TLS handshake timed out after ${this.deps.connectTimeoutMs} ms`), { code: 'ETIMEDOUT' })), this.deps.connectTimeoutMs);
      tls.once('secureConnect', () => {
        clearTimeout(timer);
        resolve(tls);
      });
      tls.once('error', (error) => {
        clearTimeout(timer);
        raw.destroy();
        reject(error);
      });
    });
  }
}

const CERTIFICATE_CODES = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|ERR_TLS_CERT_ALTNAME_INVALID/;

function describeUpstreamError(error: Error & { code?: string }): string {
  if (error.code !== undefined && CERTIFICATE_CODES.test(error.code)) return `its certificate does not verify for this host (${error.message})`;
  return error.message;
}
