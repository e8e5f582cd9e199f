/**
 * What the egress's TLS termination for vault credentials costs, against the raw operation in the
 * same run. A loopback HTTPS server (its own CA) answers `ok`; requests reach it
 *   raw:        straight from this process (one keep-alive TLS connection),
 *   opaque:     through a sandbox socket of the egress as an ordinary CONNECT tunnel (end-to-end TLS),
 *   terminated: through the same socket to a host a session's credential is bound to: TLS with the
 *               egress's leaf certificate, the token added, a second TLS connection to the server,
 * each as sequential requests on one connection (how an MCP client talks), then as one new
 * connection per request (the handshakes), in interleaved batches. Also prints how long the egress
 * takes to issue a leaf certificate (the first terminated CONNECT to a host pays it once).
 *
 *   node -r @swc-node/register bench/egress-tls.ts [batches] [requests-per-batch]
 *
 * Everything runs on loopback and unix sockets; nothing is left behind.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';
import { createCertificateAuthority, issueServerCertificate } from '@berth/secrets';
import { ScriptedUpstreamProxy, TestCertificates } from '@berth/testing';
// The egress exactly as its integration tests start it: real sockets, store and kernel.
import { EgressHarness } from '../apps/egress/test/egress-harness';

const BATCHES = Number(process.argv[2] ?? 10);
const PER_BATCH = Number(process.argv[3] ?? 50);
const HOST = 'mcp.bench.test';
const OPAQUE = 'opaque.bench.test';
const TOKEN = 'bench-token-0123456789abcdef';

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};
const ms = (n: number) => `${n.toFixed(3)} ms`;

/** A TLS connection to the server: direct, or CONNECT through a sandbox socket first. */
async function open(target: { direct: number } | { socket: string; host: string }, ca: string, servername: string): Promise<TLSSocket> {
  let raw: Socket | undefined;
  if ('socket' in target) {
    raw = await new Promise<Socket>((resolve, reject) => {
      const req = request({ socketPath: target.socket, method: 'CONNECT', path: `${target.host}:443` });
      req.on('connect', (res: IncomingMessage, socket: Socket) => (res.statusCode === 200 ? resolve(socket) : reject(new Error(`CONNECT ${res.statusCode}`))));
      req.on('error', reject);
      req.end();
    });
  }
  return new Promise((resolve, reject) => {
    const options = { servername, ca: [ca], ALPNProtocols: ['http/1.1'] };
    const tls = raw === undefined ? tlsConnect({ ...options, host: '127.0.0.1', port: (target as { direct: number }).direct }) : tlsConnect({ ...options, socket: raw });
    tls.once('secureConnect', () => resolve(tls));
    tls.once('error', reject);
  });
}

/** One request on an open connection; resolves when the whole answer (`ok\n`, with content-length) is in. */
function ask(tls: TLSSocket, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let data = '';
    const onData = (chunk: Buffer) => {
      data += chunk.toString('latin1');
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(data.slice(0, end))?.[1] ?? 0);
      if (data.length - end - 4 < length) return;
      tls.off('data', onData);
      if (!data.startsWith('HTTP/1.1 200')) reject(new Error(data.split('\r\n')[0]));
      else resolve();
    };
    tls.on('data', onData);
    tls.write(`GET /mcp HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 0\r\n\r\n`);
  });
}

async function timed(run: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await run();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function main(): Promise<void> {
  const certs = await TestCertificates.create(HOST);
  const seen: (string | null)[] = [];
  const server = createServer({ key: certs.server.keyPem, cert: certs.server.certPem, keepAlive: true }, (req, res) => {
    seen.push(req.headers.authorization ?? null);
    req.resume();
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '3' }).end('ok\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const upstream = await new ScriptedUpstreamProxy({ [HOST]: { tcp: `127.0.0.1:${port}` }, [OPAQUE]: { tcp: `127.0.0.1:${port}` } }).start();
  const egress = await new EgressHarness({ model: { baseUrl: null, trustedHosts: [] }, keys: {}, upstreamProxy: upstream.url, upstreamCa: [certs.caPem] }).start();
  try {
    const { vault } = await egress.vault(`https://${HOST}/mcp`, TOKEN);
    const { socket } = await egress.sandbox({ type: 'cloud' }, {}, 'claude-code', [vault.id]);
    const kinds = {
      raw: () => open({ direct: port }, certs.caPem, HOST),
      opaque: () => open({ socket, host: OPAQUE }, certs.caPem, HOST),
      terminated: () => open({ socket, host: HOST }, egress.ca.certPem, HOST),
    } as const;
    type Kind = keyof typeof kinds;
    const names = Object.keys(kinds) as Kind[];
    const sequential: Record<Kind, number[]> = { raw: [], opaque: [], terminated: [] };
    const fresh: Record<Kind, number[]> = { raw: [], opaque: [], terminated: [] };
    // Warm-up: the leaf certificate is issued, the upstream keep-alive connection exists.
    for (const kind of names) {
      const tls = await kinds[kind]();
      await ask(tls, HOST);
      tls.destroy();
    }
    for (let batch = 0; batch < BATCHES; batch++) {
      for (const kind of names) {
        const tls = await kinds[kind]();
        for (let i = 0; i < PER_BATCH; i++) sequential[kind].push(await timed(() => ask(tls, HOST)));
        tls.destroy();
        for (let i = 0; i < Math.ceil(PER_BATCH / 5); i++) {
          fresh[kind].push(
            await timed(async () => {
              const conn = await kinds[kind]();
              await ask(conn, HOST);
              conn.destroy();
            }),
          );
        }
      }
    }
    const injected = seen.filter((a) => a === `Bearer ${TOKEN}`).length;
    console.log(`egress TLS termination, ${BATCHES} interleaved batches; loopback HTTPS server, Node ${process.version}`);
    console.log(`requests on one connection (${BATCHES * PER_BATCH} each):`);
    for (const kind of names) {
      const v = sequential[kind];
      console.log(`  ${kind.padEnd(10)} p50 ${ms(percentile(v, 50))}  p99 ${ms(percentile(v, 99))}  (${(percentile(v, 50) / percentile(sequential.raw, 50)).toFixed(2)}× raw)`);
    }
    console.log(`a new connection per request (${fresh.raw.length} each): CONNECT + handshake(s) + one request:`);
    for (const kind of names) {
      const v = fresh[kind];
      console.log(`  ${kind.padEnd(10)} p50 ${ms(percentile(v, 50))}  p99 ${ms(percentile(v, 99))}  (${(percentile(v, 50) / percentile(fresh.raw, 50)).toFixed(2)}× raw)`);
    }
    console.log(`requests that reached the server with the token: ${injected} (terminated ones only)`);

    const dir = mkdtempSync(join(tmpdir(), 'berth-bench-ca-'));
    try {
      const ca = await createCertificateAuthority(dir, 'Berth bench CA');
      const issues: number[] = [];
      for (let i = 0; i < 10; i++) issues.push(await timed(async () => void (await issueServerCertificate(ca, `h${i}.bench.test`))));
      console.log(`leaf certificate issue (openssl, once per host per 12 h): p50 ${ms(percentile(issues, 50))}  max ${ms(Math.max(...issues))}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await egress.stop();
    await upstream.close();
    server.closeAllConnections();
    server.close();
    certs.remove();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
