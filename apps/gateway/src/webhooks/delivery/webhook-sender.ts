import type { LookupFunction } from 'node:net';
import { urlRefusal, type AttemptOutcome, type TargetPolicy } from '@berth/webhooks-domain';
import { guardedLookup, TargetRefused, type Resolve } from '../../outbound/guarded-lookup';
import { guardedPost } from '../../outbound/guarded-post';

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

/** `guardedPost` (redirects are not followed: a redirect could point anywhere). */
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

  private async post(url: URL, headers: Readonly<Record<string, string>>, body: string): Promise<number> {
    // The answer's body is not read: a receiver's status is all a delivery needs.
    const answer = await guardedPost(url, {
      headers: { ...headers, 'content-type': 'application/json', 'user-agent': 'Berth-Webhooks/1' },
      body,
      lookup: this.guardedLookup,
      timeoutMs: this.options.timeoutMs,
      maxBytes: 0,
    });
    return answer.status;
  }
}
