import { ApiError, ConnectionError } from '../exit-codes';

export type ApiConfig = Readonly<{ apiUrl: string; apiKey: string }>;

export type RequestOptions = Readonly<{ body?: unknown; query?: Record<string, string | number | boolean | readonly string[] | undefined>; headers?: Record<string, string> }>;

/** A thin JSON client for the Managed Agents API: errors become ApiError / ConnectionError. */
export class ApiClient {
  constructor(
    private readonly config: ApiConfig,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  get baseUrl(): string {
    return this.config.apiUrl.replace(/\/+$/, '');
  }

  headers(): Record<string, string> {
    return { 'x-api-key': this.config.apiKey, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'managed-agents-2026-04-01' };
  }

  url(path: string, query: RequestOptions['query'] = {}): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined) continue;
      if (Array.isArray(v)) for (const item of v) q.append(k, String(item));
      else q.append(k, String(v));
    }
    const s = q.toString();
    return `${this.baseUrl}${path}${s ? `?${s}` : ''}`;
  }

  /**
   * A request whose body or answer is not JSON (an upload, a download): the body is passed as is
   * (a FormData streams its file parts, a Blob its bytes), the answer comes back unread when it is a success.
   */
  async raw(method: string, path: string, opts: Omit<RequestOptions, 'body'> & { body?: FormData | Blob } = {}): Promise<Response> {
    let res: Response;
    try {
      res = await this.fetchImpl(this.url(path, opts.query), { method, headers: { ...this.headers(), ...opts.headers }, body: opts.body });
    } catch (e) {
      throw new ConnectionError(`cannot reach ${this.baseUrl}: ${causeOf(e)}`);
    }
    if (res.ok) return res;
    const text = await res.text();
    throw apiErrorFrom(res.status, parseJson(text), text);
  }

  async request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
    let res: Response;
    try {
      res = await this.fetchImpl(this.url(path, opts.query), {
        method,
        headers: { ...this.headers(), ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }), ...opts.headers },
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
      });
    } catch (e) {
      throw new ConnectionError(`cannot reach ${this.baseUrl}: ${causeOf(e)}`);
    }
    const text = await res.text();
    const json = parseJson(text);
    if (!res.ok) throw apiErrorFrom(res.status, json, text);
    return json as T;
  }
}

export function apiErrorFrom(status: number, json: unknown, text: string): ApiError {
  const err = (json as { error?: { type?: string; message?: string; code?: string } } | null)?.error;
  return new ApiError(status, err?.type ?? 'api_error', err?.message ?? (text.slice(0, 200) || `HTTP ${status}`), err?.code ?? null);
}

/** Node's fetch hides the useful part (ECONNREFUSED …) in `cause`. */
export function causeOf(e: unknown): string {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (e as Error).message;
}

function parseJson(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
