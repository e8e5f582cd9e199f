import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  describeBuildDenial,
  describeDenial,
  endToEndHeaders,
  modelUpstreamUrl,
  parseAbsoluteTarget,
  parseAuthority,
  terminatesTls,
  variableTerminatesTls,
  withCredential,
  withVariables,
  type AbsoluteTarget,
  type BoundCredential,
  type DenialInput,
  type EgressDenial,
  type VariableCredential,
} from '@berth/egress-domain';
import { contextReader, credentialNow, type ContextReader } from '../context/current-credential';
import { isUnbound, type BuildContext, type SandboxContext, type SandboxContexts } from '../context/sandbox-contexts';
import type { Clock } from '@berth/core';
import type { Logger } from '@berth/ports';
import type { BuildDenials } from '../denials/build-denials';
import type { DenialReporter } from '../denials/denial-reporter';
import type { TerminatedTunnels } from '../tls/terminated-tunnels';
import type { Destinations, Route, Verdict } from './destinations';
import type { ModelForwarder } from './model-forwarder';
import { answerText, DENIED_HEADER, relayRequest } from './relay-request';
import { bodyWithVariables, tooLargeMessage } from './variable-body';

export type SandboxProxyDeps = Readonly<{
  contexts: SandboxContexts;
  destinations: Destinations;
  models: ModelForwarder;
  tunnels: TerminatedTunnels;
  denials: DenialReporter;
  builds: BuildDenials;
  /** The operator's package mirrors on an internal network (`BERTH_EGRESS_BUILD_MIRROR_HOSTS`): image builds may reach them at private addresses. */
  buildMirrorHosts: ReadonlySet<string>;
  connectTimeoutMs: number;
  /** Tells an `mcp_oauth` token past its `expires_at`. */
  clock: Clock;
  log: Logger;
  /** Counts every refusal by reason (`berth_egress_denials_total`). */
  refused: (reason: string) => void;
}>;

/**
 * The HTTP proxy sandboxes reach (one server per socket, whose identity is fixed; or one TCP server
 * for pods, identified by the address a connection comes from). Three kinds of request:
 * - origin-form (`POST /v1/messages`): the harness talking to its model at the relay → the model endpoint, with the real key;
 * - absolute-form (`GET http://host/path`): plain HTTP through the proxy → the destination, if the environment allows it,
 *   with the session's vault credential for that MCP server as `Authorization: Bearer`, and the secrets of its
 *   `environment_variable` credentials for that host in place of their placeholders (the sandbox never holds either);
 *   a request whose credential's token has expired is refused instead (`vault_credential_expired`), never sent with a dead token;
 * - CONNECT host:port: a tunnel (HTTPS and anything else over TCP) → the destination, if allowed; for the host and port
 *   of a session's `https://` vault credential the egress terminates the TLS itself to add the credential (`TerminatedTunnels`).
 * A refusal is an immediate 403 whose body says what would allow it, and a `berth.egress_denied` event.
 * An image build's socket gets the same proxy under its grant, no model, and its refusals recorded for the build.
 */
export function createSandboxProxy(identityOf: (req: IncomingMessage) => string, deps: SandboxProxyDeps): Server {
  const server = createServer((req, res) => void handleRequest(identityOf(req), deps, req, res).catch((error: unknown) => internalError(deps, res, error)));
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => void handleConnect(identityOf(req), deps, req, socket as Socket, head).catch((error: unknown) => {
    deps.log.error('CONNECT failed', { err: error });
    socket.destroy();
  }));
  server.on('clientError', (_error, socket) => socket.destroy());
  return server;
}

async function handleRequest(identity: string, deps: SandboxProxyDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const context = await deps.contexts.resolve(identity);
  if (isUnbound(context)) {
    deps.refused('unbound_sandbox');
    return answerText(res, 403, `Berth egress: ${context.unbound}.`, { [DENIED_HEADER]: 'unbound_sandbox' });
  }
  const url = req.url ?? '';
  if (url.startsWith('/') && context.kind === 'build') return answerText(res, 403, 'Berth egress: an image build reaches no model endpoint.', { [DENIED_HEADER]: 'image_build' });
  if (url.startsWith('/') && context.kind === 'sandbox') return deps.models.forward(context, req, res, url);
  const target = parseAbsoluteTarget(url);
  if (target === null) return answerText(res, 400, 'Berth egress accepts model API requests (/v1/…), absolute http:// URLs and CONNECT host:port.');
  // A harness that ignores NO_PROXY still reaches its model at the relay through the proxy.
  if (context.kind === 'sandbox' && isRelay(target) && context.model !== null && modelUpstreamUrl(context.model.baseUrl, target.pathAndQuery) !== null) {
    return deps.models.forward(context, req, res, target.pathAndQuery);
  }
  let verdict: Verdict;
  try {
    verdict = await deps.destinations.check(context.policy, target.host, target.port, { privateNetworks: context.kind === 'build' && deps.buildMirrorHosts.has(target.host) });
  } catch (error) {
    return answerText(res, 502, `Berth egress could not reach ${target.host}:${target.port}: ${messageOf(error)}`);
  }
  if (!verdict.allowed) {
    const denial = refusal(identity, deps, context, verdict.denial);
    return answerText(res, 403, denial.message, { [DENIED_HEADER]: denial.reason });
  }
  if (context.kind === 'build') return forwardPlain(verdict.route, target, null, [], req, res, deps.connectTimeoutMs);
  // The context in hand is the request's; only a token that looks expired sends the read past the cache.
  const read: ContextReader = (fresh) => (fresh ? contextReader(deps.contexts, identity)(true) : Promise.resolve(context));
  const now = await credentialNow(read, target, () => deps.clock.now());
  if (now === null) return answerText(res, 403, `Berth egress: the sandbox is no longer the session's bound sandbox.`, { [DENIED_HEADER]: 'unbound_sandbox' });
  if (now.expired !== null) {
    reportDenial(deps, now.context, now.expired);
    return answerText(res, 403, now.expired.message, { [DENIED_HEADER]: now.expired.reason });
  }
  return forwardPlain(verdict.route, target, now.credential, now.context.variables, req, res, deps.connectTimeoutMs);
}

async function handleConnect(identity: string, deps: SandboxProxyDeps, req: IncomingMessage, socket: Socket, head: Buffer): Promise<void> {
  socket.on('error', () => socket.destroy());
  const context = await deps.contexts.resolve(identity);
  if (isUnbound(context)) {
    deps.refused('unbound_sandbox');
    return endTunnel(socket, 403, `Berth egress: ${context.unbound}.`, 'unbound_sandbox');
  }
  const target = parseAuthority(req.url ?? '');
  if (target === null) return endTunnel(socket, 400, `Berth egress: CONNECT needs host:port, not ${JSON.stringify(req.url ?? '')}.`);
  let verdict: Verdict;
  try {
    verdict = await deps.destinations.check(context.policy, target.host, target.port, { privateNetworks: context.kind === 'build' && deps.buildMirrorHosts.has(target.host) });
  } catch (error) {
    return endTunnel(socket, 502, `Berth egress could not reach ${target.host}:${target.port}: ${messageOf(error)}`);
  }
  if (!verdict.allowed) {
    const denial = refusal(identity, deps, context, verdict.denial);
    return endTunnel(socket, 403, denial.message, denial.reason);
  }
  if (context.kind === 'sandbox' && (terminatesTls(context.credentials, target) || variableTerminatesTls(context.variables, target))) {
    try {
      const grant = { sessionId: context.sessionId, target, route: verdict.route, context: contextReader(deps.contexts, identity), report: (denial: EgressDenial) => reportDenial(deps, context, denial) };
      return await deps.tunnels.terminate(socket, head, grant);
    } catch (error) {
      return endTunnel(socket, 502, `Berth egress could not open a TLS tunnel to ${target.host}:${target.port}: ${messageOf(error)}`);
    }
  }
  let upstream: Socket;
  try {
    upstream = await deps.destinations.tunnel(verdict.route, target.host, target.port);
  } catch (error) {
    return endTunnel(socket, 502, `Berth egress could not reach ${target.host}:${target.port}: ${messageOf(error)}`);
  }
  socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
  if (head.length > 0) upstream.write(head);
  upstream.on('error', () => socket.destroy());
  socket.on('close', () => upstream.destroy());
  upstream.on('close', () => socket.destroy());
  upstream.pipe(socket);
  socket.pipe(upstream);
}

/** Words and record of a refusal: a sandbox's goes to its session as an event, a build's to the build. */
function refusal(identity: string, deps: SandboxProxyDeps, context: SandboxContext | BuildContext, input: Omit<DenialInput, 'environmentId'>): EgressDenial {
  deps.refused(input.reason);
  if (context.kind === 'build') {
    const denial = describeBuildDenial(context.grant, input);
    deps.builds.record(identity, context, denial);
    return denial;
  }
  const denial = describeDenial({ ...input, environmentId: context.environmentId });
  deps.denials.report(context, denial);
  return denial;
}

/** A refusal worded already (an expired credential's), counted and told to the session. */
function reportDenial(deps: SandboxProxyDeps, context: SandboxContext, denial: EgressDenial): void {
  deps.refused(denial.reason);
  deps.denials.report(context, denial);
}

async function forwardPlain(
  route: Route,
  target: AbsoluteTarget,
  credential: BoundCredential | null,
  variables: readonly VariableCredential[],
  req: IncomingMessage,
  res: ServerResponse,
  connectTimeoutMs: number,
): Promise<void> {
  const hostHeader = target.port === 80 ? target.host : `${target.host}:${target.port}`;
  const body = await bodyWithVariables(req, variables, target.host);
  if (body === 'too_large') return answerText(res, 413, tooLargeMessage, { connection: 'close' });
  const sent = { ...withVariables(endToEndHeaders(req.headers, new Set(['host'])), variables, target.host), host: hostHeader, ...(body === null ? {} : { 'content-length': String(body.length) }) };
  const headers = credential === null ? sent : withCredential(sent, credential);
  const open = () =>
    route.kind === 'direct'
      ? httpRequest({ host: route.address, port: target.port, path: target.pathAndQuery, method: req.method, headers, agent: false })
      : httpRequest({
          host: route.proxy.host,
          port: route.proxy.port,
          path: `http://${hostHeader}${target.pathAndQuery}`,
          method: req.method,
          headers: route.proxy.authorization === null ? headers : { ...headers, 'proxy-authorization': route.proxy.authorization },
          agent: false,
        });
  relayRequest(open, req, res, { connectTimeoutMs, body: body ?? undefined, onError: (error) => answerText(res, 502, `Berth egress could not reach ${hostHeader}: ${error.message}`) });
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

function endTunnel(socket: Socket, status: number, message: string, reason?: string): void {
  const body = `${message}\n`;
  const phrase = status === 403 ? 'Forbidden' : status === 400 ? 'Bad Request' : 'Bad Gateway';
  socket.end(
    `HTTP/1.1 ${status} ${phrase}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${reason === undefined ? '' : `${DENIED_HEADER}: ${reason}\r\n`}connection: close\r\n\r\n${body}`,
  );
}

function internalError(deps: SandboxProxyDeps, res: ServerResponse, error: unknown): void {
  deps.log.error('request failed', { err: error });
  answerText(res, 500, 'Berth egress: internal error (see the egress log).');
}

/** The sandbox's own relay (loopback, any port): only the model API lives there. */
const isRelay = (target: AbsoluteTarget): boolean => target.host === 'localhost' || target.host === '127.0.0.1' || target.host === '::1';
