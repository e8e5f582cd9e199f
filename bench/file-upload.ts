/**
 * Uploads large files through the official SDK to a gateway running in a child process (kernel
 * in-process, SQLite file + directory blob store in a temp dir) and samples the child's resident
 * memory (VmRSS) every 20 ms: a streamed upload keeps it flat whatever the file size. Beside it,
 * the raw operation: a stream copy of the same file on the same disk. Then downloads the file
 * back and checks its sha256.
 *
 *   node -r @swc-node/register bench/file-upload.ts [megabytes=200]
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createInterface } from 'node:readline';
import Anthropic from '@anthropic-ai/sdk';

const MB = 1024 * 1024;

async function serve(): Promise<void> {
  const { startInProcessGateway } = await import('./support/in-process-gateway');
  const gw = await startInProcessGateway('upload');
  process.stdout.write(`${JSON.stringify({ base: gw.base, key: gw.key })}\n`);
  process.on('SIGTERM', () => void gw.close().then(() => process.exit(0)));
}

const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

async function writeRandomFile(path: string, bytes: number): Promise<string> {
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  for (let written = 0; written < bytes; written += MB) {
    const chunk = randomBytes(Math.min(MB, bytes - written));
    hash.update(chunk);
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((e?: Error | null) => (e ? reject(e) : resolve())));
  return hash.digest('hex');
}

async function startChild(): Promise<{ child: ChildProcess; base: string; key: string }> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', __filename, '--serve'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await new Promise<string>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    lines.once('line', resolve);
    child.once('exit', (code) => reject(new Error(`gateway child exited with ${code}`)));
  });
  const { base, key } = JSON.parse(first) as { base: string; key: string };
  return { child, base, key };
}

async function measure(client: Anthropic, pid: number, path: string): Promise<{ ms: number; peak: number; before: number; id: string }> {
  const before = rssOf(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
  const started = performance.now();
  try {
    const file = await client.beta.files.upload({ file: createReadStream(path) });
    return { ms: performance.now() - started, peak: Math.max(peak, rssOf(pid)), before, id: file.id };
  } finally {
    clearInterval(sampler);
  }
}

async function main(): Promise<void> {
  const megabytes = Number(process.argv[2] ?? 200);
  const dir = mkdtempSync(join(process.env.BERTH_BENCH_DIR ?? tmpdir(), 'berth-bench-upload-'));
  const { child, base, key } = await startChild();
  try {
    const pid = child.pid as number;
    const client = new Anthropic({ apiKey: key, baseURL: base, maxRetries: 0, timeout: 600_000 });
    const small = join(dir, 'small.bin');
    const big = join(dir, 'big.bin');
    await writeRandomFile(small, MB);
    const smallMid = join(dir, 'mid.bin');
    await writeRandomFile(smallMid, Math.max(1, Math.round(megabytes / 10)) * MB);
    const bigSha = await writeRandomFile(big, megabytes * MB);

    await measure(client, pid, small); // warm-up: code paths loaded, buffers allocated
    const idle = rssOf(pid);
    const mid = await measure(client, pid, smallMid);
    const large = await measure(client, pid, big);

    const rawStarted = performance.now();
    await pipeline(createReadStream(big), createWriteStream(join(dir, 'copy.bin')));
    const rawMs = performance.now() - rawStarted;

    const downloaded = createHash('sha256');
    for await (const chunk of (await client.beta.files.download(large.id)).body as unknown as AsyncIterable<Uint8Array>) downloaded.update(chunk);
    const intact = downloaded.digest('hex') === bigSha;

    const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MiB`;
    const midMb = Math.max(1, Math.round(megabytes / 10));
    console.log(`gateway RSS idle after a 1 MiB warm-up upload: ${mb(idle)}`);
    console.log('| upload | time | throughput | gateway RSS before | peak during upload | peak − before |');
    console.log('|---|---|---|---|---|---|');
    console.log(`| ${midMb} MiB | ${mid.ms.toFixed(0)} ms | ${((midMb * 1000) / mid.ms).toFixed(0)} MiB/s | ${mb(mid.before)} | ${mb(mid.peak)} | ${mb(mid.peak - mid.before)} |`);
    console.log(`| ${megabytes} MiB | ${large.ms.toFixed(0)} ms | ${((megabytes * 1000) / large.ms).toFixed(0)} MiB/s | ${mb(large.before)} | ${mb(large.peak)} | ${mb(large.peak - large.before)} |`);
    console.log(`raw stream copy of the ${megabytes} MiB file on the same disk: ${rawMs.toFixed(0)} ms (upload / raw = ${(large.ms / rawMs).toFixed(2)}×)`);
    console.log(`download sha256 matches the uploaded file: ${intact}`);
    if (!intact) process.exitCode = 1;
  } finally {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--serve')) void serve();
else
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
