import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArchiveJournal, parseArchiveManifest } from '@berth/contracts';
// The gateway's own test composition (in-memory SQLite, in-process kernel, echoing turn runner); no lib exports a platform harness yet.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startGateway, type GatewayHarness } from '../../../gateway/test/support/gateway-harness';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { unpackTar } from '../../../gateway/test/support/tar';
import { ExitCode } from '../exit-codes';
import { DroppingProxy } from '../test-support/dropping-proxy';

/**
 * The real `bin/berth` executable against a running gateway whose turns a fake runner answers
 * ("echo: <text>"): create an agent, an environment and a session, send with --wait, and tail
 * through a proxy that cuts the stream twice: every journal event arrives exactly once, in order;
 * pause, resume, fork, export, and import the export under another owner.
 */
jest.setTimeout(120_000);

const BERTH = resolve(__dirname, '..', '..', '..', '..', 'bin', 'berth');

type Run = { code: number; stdout: string; stderr: string };

let gw: GatewayHarness;
beforeAll(async () => {
  // Checkpoints: each turn the fake runner completes can be forked from, as on the platform.
  gw = await startGateway({ checkpoints: true });
});
afterAll(() => gw?.close());

function berth(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((done) => {
    execFile(BERTH, args, { env: { ...process.env, BERTH_API_URL: gw.url, BERTH_API_KEY: gw.keyA, ...env }, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

async function ok(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const run = await berth(args, env);
  if (run.code !== 0) throw new Error(`berth ${args.join(' ')} exited ${run.code}: ${run.stderr}`);
  return run;
}

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('berth CLI against a running gateway', () => {
  let sessionId: string;

  it('creates an agent, an environment and a session', async () => {
    const agent = JSON.parse((await ok(['--json', 'agents', 'create', '--name', 'cli-agent', '--model', 'claude-sonnet-4-5', '--tool', 'web_fetch:off'])).stdout);
    expect(agent).toMatchObject({ name: 'cli-agent', version: 1, tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'web_fetch', enabled: false }] }] });
    const env = JSON.parse((await ok(['envs', 'create', '--name', 'cli-env', '--harness', 'pi', '--idle-timeout', '600', '--apt', 'jq', '--json'])).stdout);
    expect(env.config).toMatchObject({ harness: 'pi', idle_timeout_seconds: 600, packages: { apt: ['jq'] } });
    const updated = JSON.parse((await ok(['envs', 'update', env.id, '--warm-pool', '0', '--json'])).stdout);
    expect(updated.config).toMatchObject({ harness: 'pi', idle_timeout_seconds: 600, warm_pool_size: 0, packages: { apt: ['jq'] } });
    const session = JSON.parse((await ok(['sessions', 'create', '--agent', agent.id, '--env', env.id, '--title', 'from the cli', '--json'])).stdout);
    expect(session).toMatchObject({ title: 'from the cli', status: 'idle' });
    sessionId = session.id;

    const listed = await ok(['sessions', 'list']);
    expect(listed.stdout).toMatch(new RegExp(`^${sessionId}\\s+idle\\s+cli-agent`, 'm'));
  });

  it('sends with --wait: progress on stderr, the answer on stdout', async () => {
    const first = await ok(['send', sessionId, 'hello there', '--wait']);
    expect(first.stdout.trim()).toBe('echo: hello there');
    expect(first.stderr).toContain('session.status_running');
    expect(first.stderr).toMatch(/session\.status_idle {2}end_turn/);
    expect((await ok(['send', sessionId, 'second question', '--wait'])).stdout.trim()).toBe('echo: second question');
  });

  it('tail resumes through dropped connections with no gap and no duplicate, then follows live', async () => {
    const journal = await gw.store.journal.readEvents(sessionId, { afterSeq: 0, limit: 1000 });
    expect(journal.length).toBeGreaterThan(8);
    const proxy = await new DroppingProxy(gw.url, [3, 4]).start();
    const tail = spawn(BERTH, ['--json', 'tail', sessionId], { env: { ...process.env, BERTH_API_URL: proxy.url, BERTH_API_KEY: gw.keyA } });
    let stdout = '';
    let stderr = '';
    tail.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    tail.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((r) => tail.on('close', (code) => r(code)));
    const lines = () => stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { seq: number; id: string; type: string });
    try {
      await until(() => lines().length >= journal.length, `${journal.length} replayed events`);
      // Live: a turn that happens while tailing arrives through the same (third) connection.
      await ok(['send', sessionId, 'while tailing']);
      await until(() => lines().some((e) => e.type === 'agent.message' && JSON.stringify(e).includes('echo: while tailing')), 'the live answer');
      await until(() => lines().at(-1)?.type === 'session.status_idle', 'the live turn to end');
    } finally {
      tail.kill('SIGINT');
    }
    expect(await exited).toBe(ExitCode.ok);
    await proxy.stop();

    const all = await gw.store.journal.readEvents(sessionId, { afterSeq: 0, limit: 1000 });
    const seen = lines();
    expect(seen.map((e) => e.seq)).toEqual(all.map((e) => e.seq));
    expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
    expect(proxy.cuts).toBe(2);
    expect(proxy.streamConnections).toBe(3);
    expect(stderr).toMatch(/connection lost .*resuming after #3/);
    expect(stderr).toMatch(/resuming after #7/);
    expect(stderr).toMatch(new RegExp(`stopped after #${all.at(-1)?.seq} \\(resume with --after ${all.at(-1)?.seq}\\)`));
  });

  it('tail --after skips what was already seen', async () => {
    const run = await ok(['tail', sessionId, '--after', '4', '--until', 'session.status_idle']);
    const seqs = run.stdout
      .trim()
      .split('\n')
      .map((l) => Number(/^#(\d+) /.exec(l)?.[1]));
    expect(seqs[0]).toBe(5);
    expect(seqs).toEqual(seqs.map((_, i) => 5 + i));
  });

  it('pauses, resumes and forks the session, exports it to a file and imports that file under another key', async () => {
    expect(JSON.parse((await ok(['sessions', 'pause', sessionId, '--json'])).stdout).berth).toMatchObject({ paused: true, sandbox: null });
    expect(JSON.parse((await ok(['sessions', 'resume', sessionId, '--json'])).stdout).berth.paused).toBe(false);
    const fork = JSON.parse((await ok(['sessions', 'fork', sessionId, '--json'])).stdout);
    expect(fork.id).not.toBe(sessionId);
    expect(fork).toMatchObject({ title: 'from the cli', berth: { forked_from: { session_id: sessionId } } });

    // The harness conversation the platform mirrors: an import restores it for its first turn.
    const transcript = { path: '/home/agent/.pi/agent/sessions/cli.jsonl', data: '{"type":"message","text":"hello there"}\n' };
    await gw.store.transcripts.append({ session_id: sessionId, offset: 0, ...transcript });
    const dir = mkdtempSync(join(tmpdir(), 'berth-cli-archive-'));
    try {
      const file = join(dir, 'moved.berth.tar');
      expect(JSON.parse((await ok(['sessions', 'export', sessionId, file, '--json'])).stdout)).toMatchObject({ session_id: sessionId, path: file });
      // The archive holds the conversation: every journal event, the messages and the answers among them.
      const entries = await unpackTar(readFileSync(file));
      const manifest = parseArchiveManifest(entries[0].body.toString('utf8'));
      const journal = parseArchiveJournal(entries.find((e) => e.name === 'journal.jsonl')?.body.toString('utf8') ?? '', manifest);
      expect(journal.map((e) => e.id)).toEqual((await gw.store.journal.readEvents(sessionId)).map((e) => e.id));
      const said = journal.flatMap((e) => (e.type === 'UserMessageReceived' || e.type === 'AgentMessageRecorded' ? e.data.content.map((b) => (b.type === 'text' ? b.text : '')) : []));
      expect(said).toEqual(expect.arrayContaining(['hello there', 'echo: hello there', 'second question', 'echo: second question']));

      const imported = JSON.parse((await ok(['sessions', 'import', file, '--json'], { BERTH_API_KEY: gw.keyB })).stdout);
      expect(imported.id).not.toBe(sessionId);
      expect(imported).toMatchObject({ title: 'from the cli', berth: { imported_from: { session_id: sessionId, resources_not_carried: [] } } });
      const importedEvents = (await ok(['--json', 'tail', imported.id, '--until', 'berth.session_imported'], { BERTH_API_KEY: gw.keyB })).stdout.trim().split('\n').map((l) => JSON.parse(l));
      expect(importedEvents.at(-1)).toMatchObject({ type: 'berth.session_imported', from_session_id: sessionId, journal_events: journal.length });
      expect(await gw.store.transcripts.files(imported.id)).toEqual([transcript]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('exits with codes a script can branch on', async () => {
    const missing = await berth(['sessions', 'get', 'sesn_doesnotexist']);
    expect(missing.code).toBe(ExitCode.notFound);
    expect(missing.stderr).toMatch(/^error: .*\(code \w+, HTTP 404\)/);
    expect((await berth(['agents', 'list'], { BERTH_API_KEY: 'bk_aaaaaaaaaaaa_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb' })).code).toBe(ExitCode.auth);
    expect((await berth(['agents', 'list', '--api-url', 'http://127.0.0.1:9'])).code).toBe(ExitCode.connection);
    expect((await berth(['sessions', 'create', '--agent', 'x'])).code).toBe(ExitCode.usage);
    // Another owner's session is not found, not forbidden.
    expect((await berth(['sessions', 'get', sessionId], { BERTH_API_KEY: gw.keyB })).code).toBe(ExitCode.notFound);
  });
});
