/**
 * The session-kernel as one and as two replicas (processes sharing one SQLite store, one broker and
 * the one durable SESSION_CMD consumer), measured in the same run on the same machine:
 *
 *   node -r @swc-node/register bench/kernel-replicas.ts [commands] [sessions] [turns per session]
 *
 * For each replica count it prints
 * - commands/s of `SubmitUserMessage` over many sessions (64 in flight), with p50/p99 command → event;
 * - turn latency through the kernel: a message, then what a sandbox-manager would report for the
 *   turn (four output batches and the completion, published back to back without waiting for
 *   outcomes, so two replicas may well receive one turn's commands at once), measured from the
 *   message to its `TurnCompleted` event, p50/p99;
 * - whether every turn recorded its 20 outputs once and in order (per-session order across
 *   replicas, docs/scale-out.md "Replicas").
 * No harness and no sandbox: this is the kernel's share of a turn.
 *
 * BERTH_BENCH_NATS=cluster compares instead one kernel on one nats-server (streams R1) with one
 * kernel on a three-node cluster on loopback (streams R3, NATS_URL listing all three), the same
 * figures for each (docs/scale-out.md "Limits measured here").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subjects, type RecordedEvent, type SessionCommand } from '@berth/contracts';
import { commandFor } from '@berth/contracts/testing';
import { createStore } from '@berth/store';
import { JetStreamPublisher, NatsCommandBus } from '@berth/nats';
import { startNatsCluster, startNatsServer } from '@berth/testing';
import { jetstream } from '@nats-io/jetstream';
import { createSession, submitMessage } from '../apps/session-kernel/src/testing/commands';
import { startKernelProcess, type KernelProcess } from '../apps/session-kernel/src/testing/kernel-process';
import { percentile, windowed } from './support/figures';

const COMMANDS = Number(process.argv[2] ?? 2000);
const SESSIONS = Number(process.argv[3] ?? 50);
const TURNS = Number(process.argv[4] ?? 5);
const TURN_SESSIONS = 20;
const WINDOW = 64;
const BATCHES = 4;
const PER_BATCH = 5;

/** What one measurement runs: kernel processes, and the stream replicas (3: on a three-node cluster). */
type Setup = Readonly<{ replicas: number; streamReplicas: 1 | 3 }>;
const SETUPS: readonly Setup[] =
  process.env.BERTH_BENCH_NATS === 'cluster'
    ? [{ replicas: 1, streamReplicas: 1 }, { replicas: 1, streamReplicas: 3 }]
    : [{ replicas: 1, streamReplicas: 1 }, { replicas: 2, streamReplicas: 1 }];

type Run = Readonly<{ replicas: number; streamReplicas: number; perSecond: number; p50: number; p99: number; turnP50: number; turnP99: number; turns: number; inOrder: number; load: string }>;

async function measure({ replicas, streamReplicas }: Setup): Promise<Run> {
  const server = streamReplicas > 1 ? await startNatsCluster() : await startNatsServer();
  const dir = mkdtempSync(join(process.env.BERTH_BENCH_DIR ?? tmpdir(), 'berth-bench-replicas-'));
  const storeUrl = `sqlite:${join(dir, 'berth.db')}`;
  const kernels: KernelProcess[] = [];
  const loadBefore = loadavg()[0];
  for (let i = 0; i < replicas; i++) kernels.push(await startKernelProcess({ ...server.env('session-kernel'), BERTH_STORE_URL: storeUrl, BERTH_KERNEL_CONCURRENCY: String(WINDOW), BERTH_NATS_STREAM_REPLICAS: String(streamReplicas) }));
  const nc = await server.connect('admin', 'bench');
  const bus = new NatsCommandBus(nc, new JetStreamPublisher(jetstream(nc)), { defaultTimeoutMs: 60_000 });
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const completed = new Map<string, () => void>();
  nc.subscribe(Subjects.allEvents, {
    callback: (_e, m) => {
      const event = m.json<RecordedEvent>();
      const at = sentAt.get(event.command_id);
      if (at !== undefined) {
        latencies.push(performance.now() - at);
        sentAt.delete(event.command_id);
      }
      if (event.type === 'TurnCompleted') completed.get(event.data.turn_id)?.();
    },
  });
  await nc.flush();
  try {
    // Commands/s: messages over many sessions, each command waited for.
    const sessions = Array.from({ length: SESSIONS }, (_, i) => `sesn_rep${replicas}_${i}`);
    await Promise.all(sessions.map((s) => bus.send(createSession(s))));
    const started = performance.now();
    await windowed(COMMANDS, WINDOW, async (n) => {
      const command = submitMessage(sessions[n % SESSIONS] as string, `message ${n}`);
      sentAt.set(command.meta.command_id, performance.now());
      const outcome = await bus.send(command);
      if (!outcome.ok) throw new Error(`command refused: ${outcome.error.message}`);
    });
    const perSecond = (COMMANDS / (performance.now() - started)) * 1000;
    const sorted = [...latencies].sort((a, b) => a - b);

    // Turns: message → the manager's reports, pipelined → TurnCompleted.
    const turnSessions = Array.from({ length: TURN_SESSIONS }, (_, i) => `sesn_turns${replicas}_${i}`);
    for (const s of turnSessions) {
      await bus.send(createSession(s));
      await bus.send(commandFor('BindSandbox', s, { sandbox_id: `berth-s-${s}-g1`, generation: 1, expires_at: null, warm: false }));
    }
    const turnLatencies: number[] = [];
    const turnIds: { session: string; turn: string }[] = [];
    await Promise.all(
      turnSessions.map(async (session) => {
        for (let t = 0; t < TURNS; t++) {
          const message = submitMessage(session, `turn ${t}`);
          const turn = (message.data as { turn_id: string }).turn_id;
          const done = new Promise<void>((resolve) => completed.set(turn, resolve));
          const at = performance.now();
          const outcome = await bus.send(message);
          if (!outcome.ok) throw new Error(`message refused: ${outcome.error.message}`);
          for (const report of managerReports(session, turn)) await bus.dispatch(report);
          await done;
          turnLatencies.push(performance.now() - at);
          turnIds.push({ session, turn });
        }
      }),
    );
    const turnSorted = turnLatencies.sort((a, b) => a - b);
    const store = createStore(storeUrl);
    await store.init();
    let inOrder = 0;
    for (const { session, turn } of turnIds) {
      const offsets = (await store.journal.readEvents(session, { types: ['AgentMessageRecorded'] }))
        .filter((e) => e.type === 'AgentMessageRecorded' && e.data.turn_id === turn)
        .map((e) => (e.type === 'AgentMessageRecorded' ? e.data.offset : -1));
      if (offsets.length === BATCHES * PER_BATCH && offsets.every((o, i) => o === i)) inOrder++;
    }
    await store.close();
    return {
      replicas,
      streamReplicas,
      perSecond,
      p50: percentile(sorted, 50),
      p99: percentile(sorted, 99),
      turnP50: percentile(turnSorted, 50),
      turnP99: percentile(turnSorted, 99),
      turns: turnIds.length,
      inOrder,
      load: `${loadBefore.toFixed(1)}→${loadavg()[0].toFixed(1)}`,
    };
  } finally {
    bus.close();
    await nc.close();
    for (const k of kernels) await k.stop();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a sandbox-manager reports for one turn: the outputs in four batches, then the completion. */
function managerReports(session: string, turn: string): SessionCommand[] {
  const batches = Array.from({ length: BATCHES }, (_, b) =>
    commandFor('RecordAgentOutput', session, {
      turn_id: turn,
      generation: 1,
      offset: b * PER_BATCH,
      outputs: Array.from({ length: PER_BATCH }, (_, i) => ({ kind: 'message' as const, content: [{ type: 'text' as const, text: `output ${b * PER_BATCH + i}` }] })),
      harness_session_id: null,
    }),
  );
  return [...batches, commandFor('CompleteTurn', session, { turn_id: turn, generation: 1, interrupted: false, harness_session_id: null })];
}

async function main(): Promise<void> {
  const runs: Run[] = [];
  for (const setup of SETUPS) runs.push(await measure(setup));
  const fmt = (n: number): string => n.toFixed(n >= 100 ? 0 : 1);
  console.log(`kernel replicas: ${COMMANDS} SubmitUserMessage over ${SESSIONS} sessions (${WINDOW} in flight); ${TURN_SESSIONS} sessions × ${TURNS} turns of ${BATCHES}×${PER_BATCH} outputs`);
  console.log(`  machine: ${cpus().length} cores, shared with other work; one SQLite file (WAL); NATS on loopback`);
  console.log('  kernels  NATS            commands/s  command→event p50/p99 ms  turn p50/p99 ms  turns in order  load');
  for (const r of runs) {
    const nats = r.streamReplicas > 1 ? `3 nodes, R${r.streamReplicas}` : '1 node, R1';
    console.log(`  ${String(r.replicas).padEnd(7)}  ${nats.padEnd(14)}  ${fmt(r.perSecond).padEnd(10)}  ${`${fmt(r.p50)} / ${fmt(r.p99)}`.padEnd(24)}  ${`${fmt(r.turnP50)} / ${fmt(r.turnP99)}`.padEnd(15)}  ${`${r.inOrder}/${r.turns}`.padEnd(14)}  ${r.load}`);
  }
  const [one, two] = runs as [Run, Run];
  console.log(`  ratio ${two.streamReplicas > 1 ? 'cluster/single node' : 'two/one kernels'}: commands/s ${(two.perSecond / one.perSecond).toFixed(2)}x, turn p50 ${(two.turnP50 / one.turnP50).toFixed(2)}x`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
