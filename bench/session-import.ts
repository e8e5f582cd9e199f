/**
 * `POST /v1/sessions/import` of one archive holding a workspace of `mb` MiB (files of 100 KiB) and a
 * 4 MiB harness transcript, timed from the first byte sent to the answer, beside the raw operation
 * under it in the same run: writing the same workspace bytes into the blob store
 * (`blobs.put`), which the import does once after checking and re-packing each entry.
 *
 *   node -r @swc-node/register bench/session-import.ts [runs=5] [mb=100]
 *
 * Embedded store (SQLite file, WAL; blobs in files beside it), kernel and gateway in one process,
 * the archive sent from memory by `fetch` in that process. The archive is the export of a session
 * made here, with the workspace and transcript added the way the exporter writes them.
 * BERTH_BENCH_DIR chooses where the store lives (default: the OS temp dir).
 */
import 'reflect-metadata';
import { loadavg } from 'node:os';
import { Readable } from 'node:stream';
import { extract, pack } from 'tar-stream';
import { startInProcessGateway } from './support/in-process-gateway';

const RUNS = Number(process.argv[2] ?? 5);
const WORKSPACE_MB = Number(process.argv[3] ?? 100);
const FILE_BYTES = 100 * 1024;
const TRANSCRIPT_PATH = '/home/agent/.claude/projects/-workspace/hs-bench.jsonl';

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;

async function tarOf(entries: readonly { name: string; body: Buffer }[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (c: unknown) => void chunks.push(c as Buffer));
  const ended = new Promise<void>((resolve) => archive.on('end', () => resolve()));
  for (const e of entries) await new Promise<void>((resolve, reject) => archive.entry({ name: e.name, size: e.body.length, mode: 0o644 }, e.body, (err) => (err ? reject(err) : resolve())));
  archive.finalize();
  await ended;
  return Buffer.concat(chunks);
}

async function entriesOf(bytes: Buffer): Promise<{ name: string; body: Buffer }[]> {
  const reader = extract();
  Readable.from([bytes]).pipe(reader);
  const out: { name: string; body: Buffer }[] = [];
  for await (const entry of reader) {
    const chunks: Buffer[] = [];
    for await (const c of entry) chunks.push(c as Buffer);
    out.push({ name: entry.header.name, body: Buffer.concat(chunks) });
  }
  return out;
}

async function main(): Promise<void> {
  const gw = await startInProcessGateway('import');
  try {
    const session = await gw.post('/v1/sessions', { agent: gw.agent.id, environment_id: gw.env.id, title: 'bench' });
    const exported = await fetch(`${gw.base}/v1/sessions/${session.id}/export`, { headers: { 'x-api-key': gw.key } });
    if (!exported.ok) throw new Error(`export answered ${exported.status}`);
    const [manifestEntry, ...rest] = await entriesOf(Buffer.from(await exported.arrayBuffer()));
    const files = Math.max(1, Math.round((WORKSPACE_MB * 1024 * 1024) / FILE_BYTES));
    const workspace = await tarOf([...Array(files).keys()].map((i) => ({ name: `workspace/src/file_${i}.bin`, body: Buffer.alloc(FILE_BYTES, i % 251) })));
    const transcript = Buffer.from('{"type":"assistant","message":{"content":"a line of a long conversation"}}\n'.repeat(52_000));
    const manifest = { ...JSON.parse(manifestEntry.body.toString('utf8')), transcripts: [TRANSCRIPT_PATH], workspace: true };
    const archive = await tarOf([
      { name: 'manifest.json', body: Buffer.from(JSON.stringify(manifest)) },
      ...rest,
      { name: `transcripts${TRANSCRIPT_PATH}`, body: transcript },
      { name: 'workspace.tar', body: workspace },
    ]);

    const importMs: number[] = [];
    const rawMs: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const started = performance.now();
      const res = await fetch(`${gw.base}/v1/sessions/import`, { method: 'POST', headers: { 'x-api-key': gw.key, 'content-type': 'application/x-tar' }, body: archive });
      if (!res.ok) throw new Error(`import answered ${res.status}: ${await res.text()}`);
      await res.json();
      importMs.push(performance.now() - started);
      const raw = performance.now();
      await gw.store.blobs.put(`blob_bench_raw_${run}`, Readable.from([workspace]));
      rawMs.push(performance.now() - raw);
      await gw.store.blobs.delete(`blob_bench_raw_${run}`);
    }
    const mib = archive.length / (1024 * 1024);
    console.log(`archive: ${mib.toFixed(1)} MiB (workspace ${(workspace.length / (1024 * 1024)).toFixed(1)} MiB in ${files} files, transcript ${(transcript.length / (1024 * 1024)).toFixed(1)} MiB); ${RUNS} runs; load ${load()}`);
    console.log(`import (upload → answer):     median ${median(importMs).toFixed(0)} ms, ${(mib / (median(importMs) / 1000)).toFixed(0)} MiB/s; all: ${importMs.map((m) => m.toFixed(0)).join(', ')} ms`);
    console.log(`raw blobs.put of the workspace: median ${median(rawMs).toFixed(0)} ms; ratio import / raw ${(median(importMs) / median(rawMs)).toFixed(2)}×`);
  } finally {
    await gw.close();
  }
}

void main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
