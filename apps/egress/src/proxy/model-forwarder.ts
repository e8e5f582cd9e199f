import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest, type RequestOptions } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import type { Duplex } from 'node:stream';
import { classifyAddress, isIpLiteral, isLocalName, isModelKeyName, modelErrorResponse, modelRequestHeaders, modelUpstreamUrl, normalizeHost } from '@berth/egress-domain';
import type { SandboxContext } from '../context/sandbox-contexts';
import type { Destinations, Route } from './destinations';
import { relayRequest } from './relay-request';
import { readBody } from './variable-body';
import { connectThroughUpstream, type UpstreamProxy } from './upstream-proxy';

/** Twice the Messages API's own limit (32 MB): the endpoint, not the egress, should be the one to refuse. */
const MAX_MODEL_REQUEST_BODY = 64 * 1024 * 1024;

export type ModelForwarderDeps = Readonly<{
  destinations: Destinations;
  upstream: UpstreamProxy | null;
  /** Model keys by name (`BERTH_MODEL_API_KEY`, `BERTH_MODEL_KEY_<NAME>`). */
  keys: Readonly<Record<string, string>>;
  connectTimeoutMs: number;
  /** After a connect timeout, requests to that endpoint fail at once for this long. */
  downForMs?: number;
  now?: () => number;
}>;

/**
 * Serves the model API the harness sees at its relay: forwards each origin-form request to the
 * sandbox's model endpoint with the real key (the harness only has a placeholder), and answers a
 * missing or unreachable endpoint itself, at once and in the API's own error shape, naming the
 * endpoint — so a turn fails within seconds instead of retrying for minutes.
 */
export class ModelForwarder {
  private readonly agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  private readonly tunnelled: HttpsAgent;
  private readonly down = new Map<string, { until: number; reason: string }>();
  private readonly now: () => number;

  constructor(private readonly deps: ModelForwarderDeps) {
    this.now = deps.now ?? Date.now;
    this.tunnelled = tunnellingAgent(deps.upstream, deps.connectTimeoutMs);
  }

  async forward(context: SandboxContext, req: IncomingMessage, res: ServerResponse, pathAndQuery: string): Promise<void> {
    const fail = (status: number, message: string) => {
      const answer = modelErrorResponse(context.keyHeader, status, message);
      if (res.headersSent) return void res.destroy();
      res.writeHead(answer.status, answer.headers).end(answer.body);
    };
    const model = context.model;
    if (model === null) {
      return fail(
        503,
        `Berth: no model endpoint is configured for environment ${context.environmentId}. Start the egress with BERTH_MODEL_BASE_URL (and BERTH_MODEL_API_KEY), or set config.model.base_url on the environment.`,
      );
    }
    const url = modelUpstreamUrl(model.baseUrl, pathAndQuery);
    if (url === null) return fail(404, `Berth egress forwards only model API paths (/v1/…) to the model endpoint; ${pathAndQuery.split('?')[0]} is not one.`);
    const endpoint = `${url.protocol}//${url.host}`;
    const unreachable = (reason: string) =>
      `Berth egress could not reach the model endpoint ${endpoint} (${reason}); check BERTH_MODEL_BASE_URL of the egress or config.model.base_url of environment ${context.environmentId}.`;
    const down = this.down.get(endpoint);
    if (down !== undefined && down.until > this.now()) return fail(502, unreachable(down.reason));

    const host = normalizeHost(url.hostname);
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    let route: Route | 'named';
    if (model.trusted) {
      route = this.deps.upstream !== null && !isLocal(host) ? { kind: 'upstream', proxy: this.deps.upstream } : 'named';
    } else {
      const verdict = await this.deps.destinations.checkAddress(host, port).catch((error: Error) => error);
      if (verdict instanceof Error) return fail(502, unreachable(verdict.message));
      if (!verdict.allowed) {
        const where = verdict.denial.address === undefined ? '' : ` (${verdict.denial.address.ip}, ${verdict.denial.address.range})`;
        return fail(
          403,
          `Berth egress refused the model endpoint ${endpoint}${where} of environment ${context.environmentId}: it is not a public address. The operator can allow its host with BERTH_MODEL_TRUSTED_HOSTS.`,
        );
      }
      route = verdict.route;
    }

    // Read whole so that it can be sent again should a pooled connection turn out closed (see relayRequest).
    const body = await readBody(req, MAX_MODEL_REQUEST_BODY);
    if (body === null) return fail(413, `Berth egress: a model request may be at most ${MAX_MODEL_REQUEST_BODY} bytes.`);
    const key = isModelKeyName(model.keyName) ? (this.deps.keys[model.keyName] ?? null) : null;
    const headers = modelRequestHeaders(req.headers, context.keyHeader, key, url.host);
    const options = this.requestOptions(url, route, headers, req.method ?? 'GET');
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    relayRequest(() => send(options), req, res, {
      connectTimeoutMs: this.deps.connectTimeoutMs,
      body,
      onError: (error) => {
        if (error.code === 'ETIMEDOUT') this.down.set(endpoint, { until: this.now() + (this.deps.downForMs ?? 15_000), reason: error.message });
        fail(502, unreachable(error.message));
      },
    });
  }

  private requestOptions(url: URL, route: Route | 'named', headers: Record<string, string | string[]>, method: string): RequestOptions {
    const https = url.protocol === 'https:';
    const path = `${url.pathname}${url.search}`;
    if (route === 'named') return { host: url.hostname, port: url.port || undefined, path, method, headers, agent: https ? this.agents.https : this.agents.http };
    if (route.kind === 'direct') {
      // The checked address, and the name for TLS: a second lookup cannot send the request elsewhere.
      return { host: route.address, port: url.port || undefined, path, method, headers, servername: https ? url.hostname : undefined, agent: https ? this.agents.https : this.agents.http };
    }
    if (https) return { host: url.hostname, port: url.port || 443, path, method, headers, agent: this.tunnelled };
    const proxyHeaders = route.proxy.authorization === null ? headers : { ...headers, 'proxy-authorization': route.proxy.authorization };
    return { host: route.proxy.host, port: route.proxy.port, path: url.toString(), method, headers: proxyHeaders, agent: this.agents.http };
  }

  close(): void {
    this.agents.http.destroy();
    this.agents.https.destroy();
    this.tunnelled.destroy();
  }
}

const isLocal = (host: string): boolean => isLocalName(host) || (isIpLiteral(host) && classifyAddress(host) !== 'public');

/** An HTTPS agent whose connections are CONNECT tunnels through the upstream proxy, then TLS to the endpoint. */
function tunnellingAgent(upstream: UpstreamProxy | null, timeoutMs: number): HttpsAgent {
  const agent = new HttpsAgent({ keepAlive: true });
  if (upstream === null) return agent;
  (agent as unknown as { createConnection: unknown }).createConnection = (
    options: Readonly<{ host?: string; port?: number | string; servername?: string }>,
    callback: (error: Error | null, socket?: Duplex) => void,
  ) => {
    const host = options.host ?? 'localhost';
    connectThroughUpstream(upstream, host, Number(options.port ?? 443), timeoutMs).then(
      (raw) => {
        const secure = tlsConnect({ socket: raw, servername: options.servername ?? host });
        secure.once('secureConnect', () => callback(null, secure));
        secure.once('error', (error) => callback(error));
      },
      (error: Error) => callback(error),
    );
    return undefined;
  };
  return agent;
}

