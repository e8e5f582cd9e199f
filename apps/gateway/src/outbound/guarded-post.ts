import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';

export type GuardedPost = Readonly<{
  headers: Readonly<Record<string, string | number>>;
  body: string;
  /** `guardedLookup`: the address check where the connection is made. */
  lookup: LookupFunction;
  /** The whole exchange (connect, send, answer) must end within this. */
  timeoutMs: number;
  /** The most of the answer's body kept; the connection is cut there. */
  maxBytes: number;
}>;

export type GuardedAnswer = Readonly<{ status: number; contentType: string; body: string; truncated: boolean }>;

/**
 * One POST to a URL an API user chose (a webhook delivery, an OAuth token request): Node's own
 * client, so the address check sits where the connection is made; one connection per request
 * (each resolves and checks its target anew); redirects not followed; a deadline for the whole
 * exchange and a bounded answer.
 */
export function guardedPost(url: URL, o: GuardedPost): Promise<GuardedAnswer> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<GuardedAnswer>((resolve, reject) => {
    const req = send(
      url,
      { method: 'POST', headers: { ...o.headers, 'content-length': Buffer.byteLength(o.body) }, lookup: o.lookup, timeout: o.timeoutMs, agent: false },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        let truncated = false;
        const answered = () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8'), truncated });
        res.on('data', (chunk: Buffer) => {
          if (truncated) return;
          if (size + chunk.length <= o.maxBytes) {
            chunks.push(chunk);
            size += chunk.length;
            return;
          }
          chunks.push(chunk.subarray(0, o.maxBytes - size));
          truncated = true;
          answered();
          req.destroy();
        });
        res.on('end', answered);
        res.on('error', reject);
      },
    );
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${o.timeoutMs} ms`)), o.timeoutMs);
    req.on('close', () => clearTimeout(deadline));
    req.on('timeout', () => req.destroy(new Error(`no answer within ${o.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(o.body);
  });
}
