import type { LookupFunction } from 'node:net';
import type { TokenAnswer, TokenRequest } from '@berth/vaults-domain';
import type { TargetPolicy } from '@berth/webhooks-domain';
import { guardedLookup, TargetRefused, type Resolve } from '../../outbound/guarded-lookup';
import { guardedPost } from '../../outbound/guarded-post';
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

/** `guardedPost`, the token endpoint rule checked first (`tokenEndpointRefusal`). */
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

  private async send(url: URL, request: TokenRequest): Promise<TokenAnswer> {
    const answer = await guardedPost(url, {
      headers: { ...request.headers, 'user-agent': 'Berth-Vaults/1' },
      body: request.body,
      lookup: this.lookup,
      timeoutMs: this.options.timeoutMs,
      maxBytes: this.options.maxBytes,
    });
    return { kind: 'answered', ...answer };
  }
}
