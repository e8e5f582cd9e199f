/**
 * SQLite journal commit (events only) throughput and latency through the store adapter, beside a raw
 * better-sqlite3 insert loop doing the same rows in the same transactions, measured in one run.
 *
 *   node -r @swc-node/register bench/store-append.ts [appends-per-case]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { eventIdFor, type RecordedEvent } from '@berth/contracts';
import { SqliteStore } from '@berth/store';

const APPENDS = Number(process.argv[2] ?? 600);
const SESSIONS = 20;

type Figures = { eventsPerSecond: number; p50: number; p99: number };

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;

function figures(latenciesMs: number[], events: number, totalMs: number): Figures {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return { eventsPerSecond: (events / totalMs) * 1000, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
}

function batchFor(sessionId: string, from: number, size: number, n: number): RecordedEvent[] {
  const commandId = `cmd_${sessionId}_${n}`;
  return Array.from({ length: size }, (_, i) => ({
    id: eventIdFor(commandId, i),
    session_id: sessionId,
    seq: from + i,
    schema_version: 1,
    command_id: commandId,
    occurred_at: new Date().toISOString(),
    type: 'AgentMessageRecorded',
    data: { turn_id: 'turn_1', offset: from + i, content: [{ type: 'text', text: 'x'.repeat(200) }] },
  }));
}

async function throughStore(path: string, synchronous: 'full' | 'normal', size: number): Promise<Figures> {
  const store = new SqliteStore(path, { synchronous });
  await store.init();
  const next = new Array<number>(SESSIONS).fill(1);
  const latencies: number[] = [];
  const start = performance.now();
  for (let n = 0; n < APPENDS; n++) {
    const s = n % SESSIONS;
    const events = batchFor(`sesn_${s}`, next[s] ?? 1, size, n);
    const t = performance.now();
    await store.journal.commit({ sessionId: `sesn_${s}`, events });
    latencies.push(performance.now() - t);
    next[s] = (next[s] ?? 1) + size;
  }
  const total = performance.now() - start;
  await store.close();
  return figures(latencies, APPENDS * size, total);
}

/** The floor: one prepared INSERT per event, one transaction per batch, no checks, same pragmas. */
function raw(path: string, synchronous: 'full' | 'normal', size: number): Figures {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous.toUpperCase()}`);
  db.exec('CREATE TABLE raw (session_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (session_id, seq))');
  const insert = db.prepare('INSERT INTO raw (session_id, seq, body) VALUES (?, ?, ?)');
  const append = db.transaction((events: RecordedEvent[]) => {
    for (const e of events) insert.run(e.session_id, e.seq, JSON.stringify(e));
  });
  const next = new Array<number>(SESSIONS).fill(1);
  const latencies: number[] = [];
  const start = performance.now();
  for (let n = 0; n < APPENDS; n++) {
    const s = n % SESSIONS;
    const events = batchFor(`sesn_${s}`, next[s] ?? 1, size, n);
    const t = performance.now();
    append(events);
    latencies.push(performance.now() - t);
    next[s] = (next[s] ?? 1) + size;
  }
  const total = performance.now() - start;
  db.close();
  return figures(latencies, APPENDS * size, total);
}

const fmt = (f: Figures) => `${f.eventsPerSecond.toFixed(0).padStart(8)} events/s   p50 ${f.p50.toFixed(3)} ms   p99 ${f.p99.toFixed(3)} ms`;

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'berth-bench-store-'));
  try {
    console.log(`SQLite journal append, ${APPENDS} appends per case over ${SESSIONS} sessions, WAL, file in ${tmpdir()}`);
    for (const synchronous of ['full', 'normal'] as const) {
      for (const size of [1, 10]) {
        const tag = `${synchronous}-${size}`;
        const store = await throughStore(join(dir, `store-${tag}.db`), synchronous, size);
        const floor = raw(join(dir, `raw-${tag}.db`), synchronous, size);
        console.log(`synchronous=${synchronous.padEnd(6)} batch=${String(size).padStart(2)}  store ${fmt(store)}`);
        console.log(`${' '.repeat(27)}raw   ${fmt(floor)}`);
        console.log(`${' '.repeat(27)}store/raw: throughput ${(store.eventsPerSecond / floor.eventsPerSecond).toFixed(2)}x, p50 latency ${(store.p50 / floor.p50).toFixed(2)}x`);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void main();
