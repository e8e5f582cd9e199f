import { normalizeHost } from '@berth/contracts';

/** How a model API takes its key: Anthropic's `x-api-key`, or OpenAI's `Authorization: Bearer`. */
export type ModelKeyHeader = 'x-api-key' | 'bearer';

export const DEFAULT_MODEL_KEY_NAME = 'BERTH_MODEL_API_KEY';

/**
 * The only variables of the egress an environment may name as its model key
 * (`config.model.api_key_env`); anything else of its environment must never reach a model server
 * the caller picked.
 */
export const isModelKeyName = (name: string): boolean => name === DEFAULT_MODEL_KEY_NAME || /^BERTH_MODEL_KEY_[A-Z0-9_]{1,100}$/.test(name);

/** Where a sandbox's model requests go, and which key they get there. */
export type ModelEndpoint = Readonly<{
  /** Server root the harness's paths are appended to, e.g. `https://api.anthropic.com`. */
  baseUrl: string;
  keyName: string;
  /** The operator's server-wide endpoint, or one the operator lets environments name: any address. */
  trusted: boolean;
}>;

type Raw = Readonly<Record<string, unknown>>;
const record = (v: unknown): Raw => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Raw) : {});
const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

export type ServerModelSettings = Readonly<{
  /** `BERTH_MODEL_BASE_URL`, or null. */
  baseUrl: string | null;
  /** Hosts an environment's own `config.model.base_url` may name even though they are not public (development, tests). */
  trustedHosts: readonly string[];
}>;

/**
 * The endpoint for a sandbox: the environment's `config.model.base_url` if it names one, else the
 * server-wide default; null when there is neither. An environment's own endpoint is trusted only
 * when it is the server's or its host is one the operator listed; otherwise the egress holds it
 * to the same rule as any destination (public addresses only).
 */
export function modelEndpointFrom(environmentConfig: unknown, server: ServerModelSettings): ModelEndpoint | null {
  const model = record(record(environmentConfig)['model']);
  const own = text(model['base_url']);
  const keyName = text(model['api_key_env']) ?? DEFAULT_MODEL_KEY_NAME;
  if (own === null) return server.baseUrl === null ? null : { baseUrl: server.baseUrl, keyName, trusted: true };
  const url = parseHttpUrl(own);
  if (url === null) return null;
  const trusted = (server.baseUrl !== null && parseHttpUrl(server.baseUrl)?.origin === url.origin) || server.trustedHosts.map(normalizeHost).includes(normalizeHost(url.hostname));
  return { baseUrl: own, keyName, trusted };
}

function parseHttpUrl(text: string): URL | null {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : null;
  } catch {
    return null;
  }
}

/**
 * The upstream URL for an origin-form request the harness sent to the relay, or null when the
 * path is not part of a model API. Harnesses append `/v1/…` to their base URL (Claude Code also
 * probes `/api/hello`); the check runs on the resolved URL, so `/v1/../x` cannot leave the API.
 */
export function modelUpstreamUrl(baseUrl: string, pathAndQuery: string): URL | null {
  const base = parseHttpUrl(baseUrl);
  if (base === null || !pathAndQuery.startsWith('/')) return null;
  const prefix = base.pathname.replace(/\/+$/, '');
  let target: URL;
  try {
    target = new URL(`${prefix}${pathAndQuery}`, base.origin);
  } catch {
    return null;
  }
  if (target.origin !== base.origin) return null;
  const rest = target.pathname.slice(prefix.length);
  if (!target.pathname.startsWith(prefix) || !(rest.startsWith('/v1/') || rest === '/api/hello')) return null;
  return target;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
// Whatever credential the harness sent (its placeholder) never goes upstream.
const CREDENTIALS = new Set(['x-api-key', 'authorization', 'api-key', 'openai-api-key', 'cookie']);

export type HeaderMap = Readonly<Record<string, string | readonly string[] | undefined>>;

/** Headers less the hop-by-hop ones (and those `Connection` names): what a proxy passes on, either way. */
export function endToEndHeaders(incoming: HeaderMap, drop: ReadonlySet<string> = new Set()): Record<string, string | string[]> {
  const named = new Set(
    String(incoming['connection'] ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h !== ''),
  );
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming)) {
    const lower = name.toLowerCase();
    if (value === undefined || HOP_BY_HOP.has(lower) || named.has(lower) || drop.has(lower)) continue;
    out[lower] = typeof value === 'string' ? value : [...value];
  }
  return out;
}

const REPLACED_ON_MODEL_REQUESTS = new Set([...CREDENTIALS, 'host']);

/** Headers for the upstream request: the harness's, less hop-by-hop ones and any credential, plus the real key. */
export function modelRequestHeaders(incoming: HeaderMap, style: ModelKeyHeader, key: string | null, host: string): Record<string, string | string[]> {
  const out = endToEndHeaders(incoming, REPLACED_ON_MODEL_REQUESTS);
  out['host'] = host;
  if (key !== null) {
    if (style === 'x-api-key') out['x-api-key'] = key;
    else out['authorization'] = `Bearer ${key}`;
  }
  return out;
}

/**
 * An error the egress answers a model request with itself (no endpoint configured, endpoint
 * unreachable), in the shape the harness's API uses. `x-should-retry: false` makes Claude Code
 * fail the turn at once instead of retrying for minutes.
 */
export function modelErrorResponse(style: ModelKeyHeader, status: number, message: string): { status: number; headers: Record<string, string>; body: string } {
  const body =
    style === 'x-api-key'
      ? { type: 'error', error: { type: status === 403 ? 'permission_error' : status === 404 ? 'not_found_error' : 'api_error', message } }
      : { error: { message, type: status === 404 ? 'invalid_request_error' : 'server_error', code: 'berth_egress' } };
  return { status, headers: { 'content-type': 'application/json', 'x-should-retry': 'false' }, body: JSON.stringify(body) };
}
