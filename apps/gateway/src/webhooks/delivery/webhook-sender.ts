import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { urlRefusal, type AttemptOutcome, type TargetPolicy } from '@berth/webhooks-domain';
import { guardedLookup, TargetRefused, type Resolve } from '../../outbound/guarded-lookup';

/** Sends one signed delivery; the outcome is what the pure rules settle. */
export interface WebhookSender {
  send(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<AttemptOutcome>;
}

export type HttpWebhookSenderOptions = Readonly<{
  policy: TargetPolicy;
  /** The whole attempt (connect, send, answer) must end within this. */
  timeoutMs: number;
  /** Name resolution (the system resolver by default; tests map a name to loopback). */
  resolve?: Resolve;
}>;

/**
 * Node's own HTTP client, because the address check must sit where the connection is made
 * (`guardedLookup`). Redirects are not followed (a redirect could point anywhere); the answer's
 * body is read and dropped.
 */
export class HttpWebhookSender implements WebhookSender {
  private readonly guardedLookup: LookupFunction;

  constructor(private readonly options: HttpWebhookSenderOptions) {
    this.guardedLookup = guardedLookup(options.policy, options.resolve);
  }

  async send(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<AttemptOutcome> {
    const started = Date.now();
    const took = () => Date.now() - started;
    const refused = urlRefusal(url, this.options.policy);
    if (refused) return { kind: 'failed', status_code: null, error: `target not allowed: ${refused}`, duration_ms: 0, disable: 'target_not_allowed' };
    try {
      const status = await this.post(new URL(url), headers, body);
      if (status >= 200 && status < 300) return { kind: 'delivered', status_code: status, duration_ms: took() };
      if (status >= 300 && status < 400) return { kind: 'failed', status_code: status, error: `HTTP ${status}: redirects are not followed`, duration_ms: took(), disable: 'redirect' };
      return { kind: 'failed', status_code: status, error: `HTTP ${status}`, duration_ms: took() };
    } catch (e) {
      if (e instanceof TargetRefused) return { kind: 'failed', status_code: null, error: `target not allowed: ${e.message}`, duration_ms: took(), disable: 'target_not_allowed' };
      return { kind: 'failed', status_code: null, error: e instanceof Error ? e.message : String(e), duration_ms: took() };
    }
  }

  private post(url: URL, headers: Readonly<Record<string, string>>, body: string): Promise<number> {
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<number>((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'Berth-Webhooks/1' },
          lookup: this.guardedLookup,
          timeout: this.options.timeoutMs,
          // One connection per attempt: every attempt resolves and checks its target anew.
          agent: false,
        },
        (res: IncomingMessage) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        },
      );
      const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)), this.options.timeoutMs);
      req.on('close', () => clearTimeout(deadline));
      req.on('timeout', () => req.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)));
      req.on('error', reject);
      req.end(body);
    });
  }
}
