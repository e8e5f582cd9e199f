/**
 * Create-session → first SSE event through the gateway's HTTP API, with the embedded store
 * (SQLite file, WAL) and the session kernel in-process, beside two raw operations measured in the
 * same run (interleaved): the kernel's CreateSession plus the journal read the stream starts from
 * (no HTTP), and a bare node:http server doing the same two round trips (a JSON POST, then an SSE
 * GET answering one frame) with no work behind them. Target: p50 ≤ 10 ms.
 *
 *   node -r @swc-node/register bench/gateway-first-event.ts [iterations]
 *
 * BERTH_BENCH_DIR chooses where the SQLite file lives (default: the OS temp dir).
 */
import 'reflect-metadata';
import { createServer } from 'node:http';
import { commandFor } from '@berth/contracts/testing';
import { randomIds } from '@berth/core';
import { startInProcessGateway } from './support/in-process-gateway';

const ITERATIONS = Number(process.argv[2] ?? 300);
const WARMUP = 20;

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
};
const ms = (n: number) => `${n.toFixed(2)} ms`;

/** Opens the stream with `?after=0` and resolves at the first complete event frame. */
async function firstEvent(url: string, key: string): Promise<void> {
  const controller = new AbortController();
  const res = await fetch(url, { headers: { 'x-api-key': key }, signal: controller.signal });
  if (!res.body) throw new Error(`stream answered ${res.status}`);
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of res.body) {
    text += decoder.decode(chunk as Uint8Array, { stream: true });
    if (/^id: \d+\n[^]*?\n\n/m.test(text)) break;
  }
  controller.abort();
}

/** The HTTP floor: two round trips (POST JSON, then an SSE frame) against a server that does nothing. */
async function startBareServer(): Promise<{ base: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST') {
        res.setHeader('content-type', 'application/json');
        res.end('{"id":"sesn_bare"}');
      } else {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('id: 1\nevent: berth.session_created\ndata: {}\n\n');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return { base, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

async function main(): Promise<void> {
  const { store, kernel, base, key, headers, post, agent, env, close } = await startInProcessGateway('gateway');

  const bare = await startBareServer();
  const viaGateway: number[] = [];
  const raw: number[] = [];
  const bareHttp: number[] = [];
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    // Interleaved, so both see the same store size and machine load.
    const t0 = performance.now();
    const session = await post('/v1/sessions', { agent: agent.id, environment_id: env.id });
    await firstEvent(`${base}/v1/sessions/${session.id}/events/stream?after=0`, key);
    const t1 = performance.now();

    const sessionId = randomIds.next('sesn');
    const command = commandFor(
      'CreateSession',
      sessionId,
      { owner_id: 'bench', agent: { id: agent.id, version: 1 }, environment_id: env.id, harness: 'claude-code', title: null, metadata: {}, idempotency_key: null, permission_mode: 'always_allow' },
      { actor: 'bench' },
    );
    const t2 = performance.now();
    await kernel.execute(command);
    await store.journal.readEvents(sessionId, { afterSeq: 0, limit: 500 });
    const t3 = performance.now();
    const t4 = performance.now();
    await (await fetch(`${bare.base}/v1/sessions`, { method: 'POST', headers, body: '{}' })).json();
    await firstEvent(`${bare.base}/stream`, key);
    const t5 = performance.now();
    if (i >= WARMUP) {
      viaGateway.push(t1 - t0);
      raw.push(t3 - t2);
      bareHttp.push(t5 - t4);
    }
  }
  await close();
  await bare.close();

  const g = summary(viaGateway);
  const r = summary(raw);
  const h = summary(bareHttp);
  console.log(`gateway create-session → first SSE event (${ITERATIONS} runs, SQLite file, kernel in-process)`);
  console.log(`  via HTTP + SSE:           p50 ${ms(g.p50)}  p99 ${ms(g.p99)}   (target p50 ≤ 10 ms: ${g.p50 <= 10 ? 'met' : 'NOT met'})`);
  console.log(`  raw kernel + journal:     p50 ${ms(r.p50)}  p99 ${ms(r.p99)}`);
  console.log(`  bare HTTP, same requests: p50 ${ms(h.p50)}  p99 ${ms(h.p99)}`);
  console.log(`  ratio gateway / (raw kernel + bare HTTP): p50 ${(g.p50 / (r.p50 + h.p50)).toFixed(2)}×  p99 ${(g.p99 / (r.p99 + h.p99)).toFixed(2)}×`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
