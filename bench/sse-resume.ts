/**
 * SSE resume of a ~2,000-event session through the gateway's HTTP API: `GET …/events/stream` with
 * `Last-Event-ID: <random cursor>`, timed to the first replayed frame and to the frame carrying the
 * journal's last seq (the tail), beside the raw operation under it measured in the same run for the
 * same cursors (`journal.readEvents(sessionId, { afterSeq: cursor })`, no HTTP, no SSE encoding).
 * Plus a cold resume from seq 0 (the whole journal). Target: resume p99 ≤ 50 ms.
 *
 *   node -r @swc-node/register bench/sse-resume.ts [resumes] [events]
 *
 * Embedded store (SQLite file, WAL) and the session kernel in-process; the session's events are
 * made by real commands: user messages through the gateway, then a stand-in turn runner binding a
 * sandbox and recording harness output in batches (RecordAgentOutput) and completing each turn.
 * BERTH_BENCH_DIR chooses where the SQLite file lives (default: the OS temp dir).
 */
import 'reflect-metadata';
import { loadavg } from 'node:os';
import type { AgentOutput, CommandData, CommandType } from '@berth/contracts';
import { commandFor } from '@berth/contracts/testing';
import { startInProcessGateway } from './support/in-process-gateway';

const RESUMES = Number(process.argv[2] ?? 200);
const TARGET_EVENTS = Number(process.argv[3] ?? 2000);
const WARMUP = 20;
const COLD_RUNS = 10;
const TURNS = 4;
const OUTPUT_BATCH = 100;

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
const summary = (samples: readonly number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? 0 };
};
const ms = (n: number) => `${n.toFixed(2).padStart(6)} ms`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** Seeded, so two runs resume from the same cursors. */
function cursors(seed: number, below: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

/** Harness output shaped like a coding turn: a tool call, its result, some thinking, a message. */
function outputAt(offset: number): AgentOutput {
  const id = `toolu_${Math.floor(offset / 4)}`;
  switch (offset % 4) {
    case 0:
      return { kind: 'tool_use', tool_use_id: id, name: 'bash', input: { command: `grep -rn "pattern_${offset}" src/ | head -20` }, needs_confirmation: false };
    case 1:
      return { kind: 'tool_result', tool_use_id: id, content: [{ type: 'text', text: `src/module_${offset}.ts:42: const pattern = load();\n`.repeat(6) }], is_error: false };
    case 2:
      return { kind: 'thinking' };
    default:
      return { kind: 'message', content: [{ type: 'text', text: `Step ${offset}: the pattern is loaded in one place only; next I check its callers. `.repeat(3) }] };
  }
}

type Resume = { first: number; tail: number; frames: number };

/** Opens the stream at `cursor` and reads until the frame with id `lastSeq`; then closes it. */
async function resume(url: string, key: string, cursor: number, lastSeq: number): Promise<Resume> {
  const controller = new AbortController();
  // A stuck stream fails the run instead of hanging it.
  const timer = setTimeout(() => controller.abort(), 10_000);
  const start = performance.now();
  const res = await fetch(url, { headers: { 'x-api-key': key, accept: 'text/event-stream', 'last-event-id': String(cursor) }, signal: controller.signal });
  if (res.status !== 200 || !res.body) throw new Error(`stream answered ${res.status}`);
  const decoder = new TextDecoder();
  const tailMark = `\nid: ${lastSeq}\n`;
  let first = Number.NaN;
  let text = '\n';
  let tailAt = -1;
  try {
    for await (const chunk of res.body) {
      // Only the unread end of the buffer is searched, so reading stays linear in the replay's size.
      const from = Math.max(0, text.length - tailMark.length);
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      if (Number.isNaN(first) && /^id: \d+\n[^]*?\n\n/m.test(text)) first = performance.now() - start;
      if (tailAt === -1) tailAt = text.indexOf(tailMark, from);
      if (tailAt !== -1 && text.indexOf('\n\n', tailAt + tailMark.length) !== -1) {
        const tail = performance.now() - start;
        const frames = text.split('\n\n').filter((f) => f.replace(/^\n/, '').startsWith('id: ')).length;
        return { first, tail, frames };
      }
    }
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  throw new Error(`stream from ${cursor} ended before seq ${lastSeq}`);
}

async function main(): Promise<void> {
  const loadAtStart = load();
  const { store, kernel, base, key, post, agent, env, close } = await startInProcessGateway('resume');
  try {
    const session = await post('/v1/sessions', { agent: agent.id, environment_id: env.id });

    // The stand-in turn runner: binds the requested sandbox and answers each turn through kernel commands.
    const send = async <T extends CommandType>(type: T, data: CommandData<T>) => {
      const outcome = await kernel.execute(commandFor(type, session.id, data, { actor: 'bench-turn-runner' }));
      if (!outcome.ok) throw new Error(`${type} refused: ${outcome.error.message}`);
    };
    const started = performance.now();
    // From 0: the session asks for its sandbox when it is created, before the first message.
    let lastSeq = 0;
    for (let turn = 0; turn < TURNS; turn++) {
      await post(`/v1/sessions/${session.id}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: `Find every use of pattern ${turn}` }] }] });
      const recent = await store.journal.readEvents(session.id, { afterSeq: lastSeq });
      for (const event of recent) {
        if (event.type === 'SandboxRequested') await send('BindSandbox', { sandbox_id: `sbx_bench_${event.data.generation}`, generation: event.data.generation, expires_at: null, warm: false });
      }
      const turnStarted = (await store.journal.readEvents(session.id, { types: ['TurnStarted'] })).at(-1);
      const bound = (await store.journal.readEvents(session.id, { types: ['SandboxBound'] })).at(-1);
      if (turnStarted?.type !== 'TurnStarted' || bound?.type !== 'SandboxBound') throw new Error('the turn did not start on a bound sandbox');
      const turnId = turnStarted.data.turn_id;
      const generation = bound.data.generation;
      // Each turn fills its share of the target, leaving room for the events that close it.
      const turnEnd = Math.round((TARGET_EVENTS * (turn + 1)) / TURNS) - 1;
      for (let offset = 0; (await store.journal.lastSeq(session.id)) < turnEnd; offset += OUTPUT_BATCH) {
        const count = Math.min(OUTPUT_BATCH, turnEnd - (await store.journal.lastSeq(session.id)));
        const outputs = Array.from({ length: count }, (_, i) => outputAt(offset + i));
        await send('RecordAgentOutput', { turn_id: turnId, generation, offset, outputs, harness_session_id: null });
      }
      await send('CompleteTurn', { turn_id: turnId, generation, interrupted: false, harness_session_id: null });
      lastSeq = await store.journal.lastSeq(session.id);
    }
    const buildMs = performance.now() - started;
    const bytes = (await store.journal.readEvents(session.id)).reduce((n, e) => n + JSON.stringify(e).length, 0);
    console.log(`SSE resume, one session of ${lastSeq} journaled events (${(bytes / 1024).toFixed(0)} KiB as JSON; made in ${(buildMs / 1000).toFixed(1)} s through the kernel)`);
    console.log(`  SQLite file in a temp dir, kernel in-process; load average at start: ${loadAtStart}`);

    const url = `${base}/v1/sessions/${session.id}/events/stream`;
    const next = cursors(2000, lastSeq);
    const first: number[] = [];
    const tail: number[] = [];
    const raw: number[] = [];
    for (let i = 0; i < WARMUP + RESUMES; i++) {
      const cursor = next();
      // Interleaved, so both see the same machine load.
      const r = await resume(url, key, cursor, lastSeq);
      if (r.frames !== lastSeq - cursor) throw new Error(`resume from ${cursor} sent ${r.frames} frames, expected ${lastSeq - cursor}`);
      const t0 = performance.now();
      const events = await store.journal.readEvents(session.id, { afterSeq: cursor });
      const t1 = performance.now();
      if (events.length !== lastSeq - cursor) throw new Error(`journal read from ${cursor} returned ${events.length} events`);
      if (i >= WARMUP) {
        first.push(r.first);
        tail.push(r.tail);
        raw.push(t1 - t0);
      }
    }

    const coldTail: number[] = [];
    const coldRaw: number[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      coldTail.push((await resume(url, key, 0, lastSeq)).tail);
      const t0 = performance.now();
      await store.journal.readEvents(session.id, { afterSeq: 0 });
      coldRaw.push(performance.now() - t0);
    }

    const f = summary(first);
    const t = summary(tail);
    const r = summary(raw);
    const ct = summary(coldTail);
    const cr = summary(coldRaw);
    console.log(`  ${RESUMES} resumes (after ${WARMUP} warm-up), Last-Event-ID uniform in [0, ${lastSeq}):`);
    console.log(`    to first replayed frame:       p50 ${ms(f.p50)}  p99 ${ms(f.p99)}  max ${ms(f.max)}`);
    console.log(`    to the tail (seq ${lastSeq}):       p50 ${ms(t.p50)}  p99 ${ms(t.p99)}  max ${ms(t.max)}   (target p99 ≤ 50 ms: ${t.p99 <= 50 ? 'met' : 'NOT met'})`);
    console.log(`    raw journal.readEvents(after): p50 ${ms(r.p50)}  p99 ${ms(r.p99)}  max ${ms(r.max)}`);
    console.log(`    ratio resume-to-tail / raw read: p50 ${(t.p50 / r.p50).toFixed(2)}×  p99 ${(t.p99 / r.p99).toFixed(2)}×`);
    console.log(`  cold resume from seq 0 (all ${lastSeq} events, ${COLD_RUNS} runs): to the tail p50 ${ms(ct.p50)} max ${ms(ct.max)}; raw read p50 ${ms(cr.p50)} max ${ms(cr.max)}`);
  } finally {
    await close();
    console.log(`  load average at end: ${load()}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
