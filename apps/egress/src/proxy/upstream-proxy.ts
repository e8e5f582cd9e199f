import type { Socket } from 'node:net';
import { connectWithin } from './connect-within';

/** An HTTP proxy the egress sends everything through (`BERTH_EGRESS_UPSTREAM_PROXY`). */
export type UpstreamProxy = Readonly<{ host: string; port: number; authorization: string | null; url: string }>;

export function upstreamProxyFrom(url: string): UpstreamProxy {
  const parsed = new URL(url);
  const authorization =
    parsed.username === '' ? null : `Basic ${Buffer.from(`${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`).toString('base64')}`;
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  return { host, port: Number(parsed.port || 80), authorization, url: `${parsed.protocol}//${parsed.host}` };
}

const HEAD_LIMIT = 16 * 1024;

/**
 * A tunnel to host:port through the upstream proxy: CONNECT, then the raw socket once it answers
 * 2xx. Bytes the proxy sent after its answer's head are handed back to the socket's reader.
 */
export async function connectThroughUpstream(proxy: UpstreamProxy, host: string, port: number, timeoutMs: number): Promise<Socket> {
  const socket = await connectWithin({ host: proxy.host, port: proxy.port }, timeoutMs);
  const authority = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  socket.write(
    `CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${proxy.authorization === null ? '' : `Proxy-Authorization: ${proxy.authorization}\r\n`}\r\n`,
  );
  return new Promise((resolve, reject) => {
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => fail(new Error(`the upstream proxy ${proxy.url} did not answer CONNECT ${authority} within ${timeoutMs} ms`)), timeoutMs);
    const fail = (error: Error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > HEAD_LIMIT) fail(new Error(`the upstream proxy ${proxy.url} sent an oversized answer to CONNECT`));
        return;
      }
      socket.off('data', onData);
      socket.off('error', fail);
      socket.off('end', onEnd);
      clearTimeout(timer);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(head.subarray(0, end).toString('latin1'))?.[1];
      if (status === undefined || !status.startsWith('2')) {
        socket.destroy();
        reject(new Error(`the upstream proxy ${proxy.url} answered CONNECT ${authority} with ${status ?? 'garbage'}`));
        return;
      }
      const rest = head.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      resolve(socket);
    };
    const onEnd = () => fail(new Error(`the upstream proxy ${proxy.url} closed the connection during CONNECT ${authority}`));
    socket.on('data', onData);
    socket.once('error', fail);
    socket.once('end', onEnd);
  });
}
