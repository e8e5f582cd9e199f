import type { IncomingHttpHeaders } from 'node:http';

/** One request a model server received, as a test sees it: secrets stripped, JSON body parsed. */
export interface RecordedRequest {
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body, the raw text when it is not JSON, or null when empty. */
  readonly body: unknown;
  readonly receivedAt: Date;
}

/** Headers that carry credentials; recorded only as `[redacted]` so they never reach test output. */
const SECRET_HEADERS = new Set(['authorization', 'x-api-key', 'cookie', 'proxy-authorization', 'openai-api-key']);

export function scrubHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name) ? '[redacted]' : Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

export function parseBody(raw: string): unknown {
  if (raw.length === 0) return null;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
