import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import { endToEndHeaders } from '@berth/egress-domain';

/** Sends of one request on pooled connections the upstream closed as they were reused, at most. */
const STALE_CONNECTION_RETRIES = 2;

/**
 * Streams a request to its upstream and the answer back (SSE included: nothing is buffered). A
 * connect that takes longer than `connectTimeoutMs` fails the request; once connected there is no
 * timeout (a model may think for a long time). `onError` answers the sandbox when nothing was sent
 * yet; after that the connection is cut. A sandbox that hangs up aborts the upstream request.
 *
 * A request whose whole `body` is in hand, failing on a kept-alive connection before any answer
 * (the upstream closed it idle just as it was reused: ECONNRESET or EPIPE), is sent again on
 * another: the upstream never read it, and the sandbox should not see a 502 for a race of pooling.
 */
export function relayRequest(
  open: () => ClientRequest,
  req: IncomingMessage,
  res: ServerResponse,
  options: Readonly<{ connectTimeoutMs: number; onError: (error: Error & { code?: string }) => void; body?: Buffer }>,
): void {
  let upstream: ClientRequest;
  const send = (retriesLeft: number) => {
    upstream = open();
    upstream.on('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(
        () => upstream.destroy(Object.assign(new Error(`connect timed out after ${options.connectTimeoutMs} ms`), { code: 'ETIMEDOUT' })),
        options.connectTimeoutMs,
      );
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    upstream.on('response', (answer: IncomingMessage) => {
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, endToEndHeaders(answer.headers));
      res.flushHeaders();
      answer.pipe(res);
      answer.on('error', () => res.destroy());
    });
    upstream.on('error', (error: Error & { code?: string }) => {
      if (res.headersSent) return void res.destroy(error);
      if (options.body !== undefined && retriesLeft > 0 && upstream.reusedSocket && STALE_CONNECTION_CODES.has(error.code ?? '') && !res.destroyed) return send(retriesLeft - 1);
      options.onError(error);
    });
    // A body the egress read already (to put vault secrets in, or to be able to resend it) goes as it is; otherwise it streams.
    if (options.body === undefined) req.pipe(upstream);
    else upstream.end(options.body);
  };
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  send(STALE_CONNECTION_RETRIES);
}

const STALE_CONNECTION_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** The header of every refusal the egress answers itself: its reason (`host_not_allowed`, …). */
export const DENIED_HEADER = 'x-berth-egress-denied';

/** A short plain-text answer from the egress itself. */
export function answerText(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(`${message}\n`)), ...headers });
  res.end(`${message}\n`);
}
