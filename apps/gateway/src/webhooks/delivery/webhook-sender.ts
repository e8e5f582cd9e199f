import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { addressRefusal, urlRefusal, type AttemptOutcome, type TargetPolicy } from '@berth/webhooks-domain';

/** Sends one signed delivery; the outcome is what the pure rules settle. */
export interface WebhookSender {
  send(url: string, headers: Readonly<Record<string, string>>, body: string): Promise<AttemptOutcome>;
}

export type HttpWebhookSenderOptions = Readonly<{
  policy: TargetPolicy;
  /** The whole attempt (connect, send, answer) must end within this. */
  timeoutMs: number;
  /** Name resolution (the system resolver by default; tests map a name to loopback). */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
}>;

const systemResolve = (hostname: string) => dnsLookup(hostname, { all: true });

class TargetRefused extends Error {}

/**
 * Node's own HTTP client, because the address check must sit where the connection is made: the
 * lookup below refuses every resolved address the target policy does not allow, so a name that
 * resolves inward (or is rebound to do so after registration) is never connected to. Redirects
 * are not followed (a redirect could point anywhere); the answer's body is read and dropped.
 */
export class HttpWebhookSender implements WebhookSender {
  constructor(private readonly options: HttpWebhookSenderOptions) {}

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

  private readonly guardedLookup: LookupFunction = (hostname, options, callback) => {
    (this.options.resolve ?? systemResolve)(hostname).then(
      (found) => {
        const addresses = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        const refusal = addresses.map((a) => addressRefusal(a.address, this.options.policy)).find((r) => r !== null);
        if (refusal) return callback(new TargetRefused(`${hostname}: ${refusal}`), '', 0);
        const [first] = addresses;
        if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
