import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import type { TokenAnswer, TokenRequest } from '@berth/vaults-domain';
import type { TargetPolicy } from '@berth/webhooks-domain';
import { guardedLookup, TargetRefused, type Resolve } from '../../outbound/guarded-lookup';
import { tokenEndpointRefusal } from './token-endpoint-policy';

/** Sends one refresh request to a token endpoint; what came back is read by `readTokenAnswer`. */
export interface TokenEndpoint {
  post(request: TokenRequest): Promise<TokenAnswer>;
}

export type HttpTokenEndpointOptions = Readonly<{
  policy: TargetPolicy;
  /** The whole exchange (connect, send, answer) must end within this. */
  timeoutMs: number;
  /** The most of an answer read; a longer one is cut there (and cannot be a usable token answer). */
  maxBytes: number;
  resolve?: Resolve;
}>;

/**
 * Node's HTTP client with the webhook deliveries' address check where the connection is made
 * (`guardedLookup`), the token endpoint rule checked first (`tokenEndpointRefusal`), no redirects
 * followed, one connection per request (each resolves and checks its target anew), a deadline
 * for the whole exchange and a bounded answer.
 */
export class HttpTokenEndpoint implements TokenEndpoint {
  private readonly lookup: LookupFunction;

  constructor(private readonly options: HttpTokenEndpointOptions) {
    this.lookup = guardedLookup(options.policy, options.resolve);
  }

  async post(request: TokenRequest): Promise<TokenAnswer> {
    const refused = tokenEndpointRefusal(request.url, this.options.policy);
    if (refused !== null) return { kind: 'refused', error: refused };
    try {
      return await this.send(new URL(request.url), request);
    } catch (e) {
      if (e instanceof TargetRefused) return { kind: 'refused', error: e.message };
      return { kind: 'unreachable', error: e instanceof Error ? e.message : String(e) };
    }
  }

  private send(url: URL, request: TokenRequest): Promise<TokenAnswer> {
    const { timeoutMs, maxBytes } = this.options;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<TokenAnswer>((resolve, reject) => {
      const req = send(
        url,
        {
          method: 'POST',
          headers: { ...request.headers, 'content-length': Buffer.byteLength(request.body), 'user-agent': 'Berth-Vaults/1' },
          lookup: this.lookup,
          timeout: timeoutMs,
          agent: false,
        },
        (res: IncomingMessage) => {
          const chunks: Buffer[] = [];
          let size = 0;
          let truncated = false;
          const answered = () =>
            resolve({ kind: 'answered', status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8'), truncated });
          res.on('data', (chunk: Buffer) => {
            if (truncated) return;
            if (size + chunk.length <= maxBytes) {
              chunks.push(chunk);
              size += chunk.length;
              return;
            }
            chunks.push(chunk.subarray(0, maxBytes - size));
            truncated = true;
            answered();
            req.destroy();
          });
          res.on('end', answered);
          res.on('error', reject);
        },
      );
      const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      req.on('close', () => clearTimeout(deadline));
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', reject);
      req.end(request.body);
    });
  }
}
