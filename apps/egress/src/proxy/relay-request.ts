import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import { endToEndHeaders } from '@berth/egress-domain';

/**
 * Streams a request to its upstream and the answer back (SSE included: nothing is buffered). A
 * connect that takes longer than `connectTimeoutMs` fails the request; once connected there is no
 * timeout (a model may think for a long time). `onError` answers the sandbox when nothing was sent
 * yet; after that the connection is cut. A sandbox that hangs up aborts the upstream request.
 */
export function relayRequest(
  upstream: ClientRequest,
  req: IncomingMessage,
  res: ServerResponse,
  options: Readonly<{ connectTimeoutMs: number; onError: (error: Error & { code?: string }) => void; body?: Buffer }>,
): void {
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
  upstream.on('error', (error) => {
    if (!res.headersSent) options.onError(error);
    else res.destroy(error);
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  // A body the egress read already (to put vault secrets in) goes as it is now; otherwise it streams.
  if (options.body === undefined) req.pipe(upstream);
  else upstream.end(options.body);
}

/** The header of every refusal the egress answers itself: its reason (`host_not_allowed`, …). */
export const DENIED_HEADER = 'x-berth-egress-denied';

/** A short plain-text answer from the egress itself. */
export function answerText(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': String(Buffer.byteLength(`${message}\n`)), ...headers });
  res.end(`${message}\n`);
}
