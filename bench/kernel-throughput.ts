/**
 * Commands through the session-kernel service (spawned, SQLite store) beside raw JetStream
 * publish → receive on the same broker, measured in one run with the same in-flight window.
 *
 *   node -r @swc-node/register bench/kernel-throughput.ts [commands] [sessions] [window]
 *
 * Prints commands/s and events/s, and p50/p99 of command → first event (kernel) and of
 * publish → receive (raw), in milliseconds, with the store mode and the machine's load average.
 * BERTH_BENCH_DIR chooses where the SQLite file lives (e.g. /dev/shm to take the disk out);
 * BERTH_BENCH_SYNCHRONOUS=full|normal picks the store's fsync mode (default: the store's own
 * default, normal); BERTH_BENCH_PROFILE=<dir> writes a CPU profile of the kernel process there;
 * BERTH_BENCH_NATS=cluster runs both on a three-node cluster on loopback with every stream (the raw
 * one too) replicated three times, instead of one nats-server (docs/scale-out.md).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subjects, type RecordedEvent } from '@berth/contracts';
import { JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { startNatsCluster, startNatsServer } from '@berth/testing';
import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { createSession, submitMessage } from '../apps/session-kernel/src/testing/commands';
import { startKernelProcess } from '../apps/session-kernel/src/testing/kernel-process';
import { percentile, windowed } from './support/figures';

const COMMANDS = Number(process.argv[2] ?? 3000);
const SESSIONS = Number(process.argv[3] ?? 100);
const WINDOW = Number(process.argv[4] ?? 64);
const SYNCHRONOUS = process.env.BERTH_BENCH_SYNCHRONOUS;
const REPLICAS = process.env.BERTH_BENCH_NATS === 'cluster' ? 3 : 1;

type Figures = { perSecond: number; eventsPerSecond: number; p50: number; p99: number; elapsedMs: number };

/** CPU time (user + system) a process has used so far, from /proc (Linux); null elsewhere. */
function cpuMsOf(pid: number): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after "pid (comm) "; USER_HZ is 100 on Linux.
    return ((Number(fields[11]) + Number(fields[12])) / 100) * 1000;
  } catch {
    return null;
  }
}


async function rawJetStream(nc: NatsConnection): Promise<Figures> {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: 'BENCH_RAW', subjects: ['bench.raw.>'], retention: RetentionPolicy.Limits, storage: StorageType.File, num_replicas: REPLICAS });
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
  return { perSecond: (COMMANDS / elapsed) * 1000, eventsPerSecond: (COMMANDS / elapsed) * 1000, p50: percentile(sorted, 50), p99: percentile(sorted, 99), elapsedMs: elapsed };
}

async function throughKernel(nc: NatsConnection): Promise<Figures> {
  const bus = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)), { defaultTimeoutMs: 60_000 });
  const sessions = Array.from({ length: SESSIONS }, (_, i) => `sesn_bench${i}`);
  await Promise.all(sessions.map((s) => bus.send(createSession(s))));

  const sentAt = new Map<string, number>();
  const measured = new Set<string>();
  const seen = new Set<string>();
  const latencies: number[] = [];
  let events = 0;
  let lastEventAt = 0;
  nc.subscribe(Subjects.allEvents, {
    callback: (_e, m) => {
      const { command_id, session_id, seq } = m.json<RecordedEvent>();
      if (!measured.has(command_id)) return; // a straggler of the session creations
      // A core subscription also sees republishes the stream drops as duplicates (the outbox relay): count each event once.
      const key = `${session_id}:${seq}`;
      if (seen.has(key)) return;
      seen.add(key);
      events++;
      lastEventAt = performance.now();
      const at = sentAt.get(command_id);
      if (at !== undefined) {
        latencies.push(lastEventAt - at);
        sentAt.delete(command_id);
      }
    },
  });
  await nc.flush();
  const started = performance.now();
  await windowed(COMMANDS, WINDOW, async (n) => {
    const command = submitMessage(sessions[n % SESSIONS], `message ${n}`);
    measured.add(command.meta.command_id);
    sentAt.set(command.meta.command_id, performance.now());
    const outcome = await bus.send(command);
    if (!outcome.ok) throw new Error(`command refused: ${outcome.error.message}`);
  });
  const elapsed = performance.now() - started;
  // Events are published before the outcome is answered, but travel on another subscription: wait for the first of each command.
  const deadline = Date.now() + 5_000;
  while (sentAt.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  if (sentAt.size > 0) throw new Error(`${sentAt.size} command(s) answered but none of their events seen`);
  bus.close();
  const sorted = latencies.sort((a, b) => a - b);
  return {
    perSecond: (COMMANDS / elapsed) * 1000,
    eventsPerSecond: (events / Math.max(elapsed, lastEventAt - started)) * 1000,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    elapsedMs: elapsed,
  };
}

async function main(): Promise<void> {
  const server = REPLICAS > 1 ? await startNatsCluster() : await startNatsServer();
  const dir = mkdtempSync(join(process.env.BERTH_BENCH_DIR ?? tmpdir(), 'berth-bench-kernel-'));
  const profileDir = process.env.BERTH_BENCH_PROFILE;
  const storeUrl = `sqlite:${join(dir, 'berth.db')}${SYNCHRONOUS ? `?synchronous=${SYNCHRONOUS}` : ''}`;
  const kernel = await startKernelProcess(
    { ...server.env('session-kernel'), BERTH_STORE_URL: storeUrl, BERTH_KERNEL_CONCURRENCY: String(WINDOW), BERTH_NATS_STREAM_REPLICAS: String(REPLICAS) },
    { nodeArgs: profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [] },
  );
  const nc = await server.connect('admin', 'bench');
  try {
    const loadBefore = loadavg()[0];
    const raw = await rawJetStream(nc);
    const cpuBefore = cpuMsOf(kernel.pid);
    const viaKernel = await throughKernel(nc);
    const cpuAfter = cpuMsOf(kernel.pid);
    const fmt = (n: number): string => n.toFixed(n >= 100 ? 0 : 2);
    console.log(`kernel throughput: ${COMMANDS} SubmitUserMessage commands over ${SESSIONS} sessions, ${WINDOW} in flight`);
    console.log(`  NATS: ${REPLICAS > 1 ? `three-node cluster on loopback, streams R${REPLICAS}` : 'one nats-server, streams R1'}`);
    console.log(`  store: SQLite file in ${dir}, WAL, synchronous=${SYNCHRONOUS ?? 'normal'} (${SYNCHRONOUS ? 'chosen' : 'the default'})`);
    console.log(`  machine: ${cpus().length} cores, 1-min load average ${loadBefore.toFixed(1)} before, ${loadavg()[0].toFixed(1)} after (shared with other work)`);
    console.log(`  raw JetStream publish→receive : ${fmt(raw.perSecond)} msg/s        p50 ${fmt(raw.p50)} ms  p99 ${fmt(raw.p99)} ms`);
    console.log(`  kernel command→event          : ${fmt(viaKernel.perSecond)} commands/s  ${fmt(viaKernel.eventsPerSecond)} events/s  p50 ${fmt(viaKernel.p50)} ms  p99 ${fmt(viaKernel.p99)} ms`);
    console.log(`  ratio kernel/raw              : throughput ${(viaKernel.perSecond / raw.perSecond).toFixed(2)}x  p50 latency ${(viaKernel.p50 / raw.p50).toFixed(1)}x`);
    if (cpuBefore !== null && cpuAfter !== null) {
      // Includes the 100 session creations, so it slightly overstates the cost of one message.
      const perCommand = (cpuAfter - cpuBefore) / (COMMANDS + SESSIONS);
      const busy = ((cpuAfter - cpuBefore) / viaKernel.elapsedMs) * 100;
      console.log(`  kernel process CPU            : ${perCommand.toFixed(2)} ms per command, ${busy.toFixed(0)}% of one core during the run`);
    }
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
