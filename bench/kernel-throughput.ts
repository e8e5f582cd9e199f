/**
 * Commands through the session-kernel service (spawned, SQLite store) beside raw JetStream
 * publish → receive on the same broker, measured in one run with the same in-flight window.
 *
 *   node -r @swc-node/register bench/kernel-throughput.ts [commands] [sessions] [window]
 *
 * Prints commands/s and events/s, and p50/p99 of command → first event (kernel) and of
 * publish → receive (raw), in milliseconds. BERTH_BENCH_DIR chooses where the SQLite file lives
 * (e.g. /dev/shm to take the disk's fsync cost out and see the software's own ceiling);
 * BERTH_BENCH_PROFILE=<dir> writes a CPU profile of the kernel process there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subjects, type RecordedEvent } from '@berth/contracts';
import { connectNats, JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { startNatsServer } from '@berth/testing';
import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { createSession, submitMessage } from '../apps/session-kernel/src/testing/commands';
import { startKernelProcess } from '../apps/session-kernel/src/testing/kernel-process';

const COMMANDS = Number(process.argv[2] ?? 3000);
const SESSIONS = Number(process.argv[3] ?? 100);
const WINDOW = Number(process.argv[4] ?? 64);

type Figures = { perSecond: number; eventsPerSecond: number; p50: number; p99: number };

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

/** Runs `count` jobs with at most `window` in flight. */
async function windowed(count: number, window: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(window, count) }, async () => {
      while (next < count) await job(next++);
    }),
  );
}

async function rawJetStream(nc: NatsConnection): Promise<Figures> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'BENCH_RAW', subjects: ['bench.raw.>'], retention: RetentionPolicy.Limits, storage: StorageType.File });
  const publisher = new JetStreamPublisher(jetstream(nc));
  const sentAt = new Map<number, number>();
  const latencies: number[] = [];
  let received = 0;
  let allReceived: () => void = () => undefined;
  const done = new Promise<void>((r) => (allReceived = r));
  nc.subscribe('bench.raw.>', {
    callback: (_e, m) => {
      const { n } = m.json<{ n: number }>();
      latencies.push(performance.now() - (sentAt.get(n) ?? 0));
      if (++received === COMMANDS) allReceived();
    },
  });
  await nc.flush();
  const started = performance.now();
  await windowed(COMMANDS, WINDOW, async (n) => {
    sentAt.set(n, performance.now());
    await publisher.publish(`bench.raw.s${n % SESSIONS}`, { n, text: `message ${n}` }, { msgId: `raw-${n}` });
  });
  await done;
  const elapsed = performance.now() - started;
  const sorted = latencies.sort((a, b) => a - b);
  return { perSecond: (COMMANDS / elapsed) * 1000, eventsPerSecond: (COMMANDS / elapsed) * 1000, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function throughKernel(nc: NatsConnection): Promise<Figures> {
  const bus = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)), { defaultTimeoutMs: 60_000 });
  const sessions = Array.from({ length: SESSIONS }, (_, i) => `sesn_bench${i}`);
  await Promise.all(sessions.map((s) => bus.send(createSession(s))));

  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let events = 0;
  nc.subscribe(Subjects.allEvents, {
    callback: (_e, m) => {
      events++;
      const { command_id } = m.json<RecordedEvent>();
      const at = sentAt.get(command_id);
      if (at !== undefined) {
        latencies.push(performance.now() - at);
        sentAt.delete(command_id);
      }
    },
  });
  await nc.flush();
  const started = performance.now();
  await windowed(COMMANDS, WINDOW, async (n) => {
    const command = submitMessage(sessions[n % SESSIONS], `message ${n}`);
    sentAt.set(command.meta.command_id, performance.now());
    const outcome = await bus.send(command);
    if (!outcome.ok) throw new Error(`command refused: ${outcome.error.message}`);
  });
  const elapsed = performance.now() - started;
  await new Promise((r) => setTimeout(r, 200)); // let the last events' core deliveries arrive before reading counters
  bus.close();
  const sorted = latencies.sort((a, b) => a - b);
  return { perSecond: (COMMANDS / elapsed) * 1000, eventsPerSecond: (events / elapsed) * 1000, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

async function main(): Promise<void> {
  const server = await startNatsServer();
  const dir = mkdtempSync(join(process.env.BERTH_BENCH_DIR ?? tmpdir(), 'berth-bench-kernel-'));
  const profileDir = process.env.BERTH_BENCH_PROFILE;
  const kernel = await startKernelProcess(
    { NATS_URL: server.url, BERTH_STORE_URL: `sqlite:${join(dir, 'berth.db')}`, BERTH_KERNEL_CONCURRENCY: String(WINDOW) },
    { nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] },
  );
  const nc = await connectNats({ url: server.url, name: 'bench' });
  try {
    const raw = await rawJetStream(nc);
    const viaKernel = await throughKernel(nc);
    const fmt = (n: number): string => n.toFixed(n >= 100 ? 0 : 2);
    console.log(`kernel throughput: ${COMMANDS} SubmitUserMessage commands over ${SESSIONS} sessions, ${WINDOW} in flight (SQLite store in ${dir})`);
    console.log(`  raw JetStream publish→receive : ${fmt(raw.perSecond)} msg/s        p50 ${fmt(raw.p50)} ms  p99 ${fmt(raw.p99)} ms`);
    console.log(`  kernel command→event          : ${fmt(viaKernel.perSecond)} commands/s  ${fmt(viaKernel.eventsPerSecond)} events/s  p50 ${fmt(viaKernel.p50)} ms  p99 ${fmt(viaKernel.p99)} ms`);
    console.log(`  ratio kernel/raw              : throughput ${(viaKernel.perSecond / raw.perSecond).toFixed(2)}x  p50 latency ${(viaKernel.p50 / raw.p50).toFixed(1)}x`);
  } finally {
    await nc.close();
    await kernel.stop();
    if (process.env.BERTH_BENCH_VERBOSE) console.log(kernel.output());
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
