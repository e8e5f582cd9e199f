import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '@berth/store';
import { commitOf } from '@berth/store/contract';
import Database from 'better-sqlite3';
import { runCli } from '../cli';
import { ExitCode } from '../exit-codes';

// `berth store check` and `berth store backup` against real SQLite files.

async function run(argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, { env: {}, io: { out: (t) => out.push(t), err: (t) => err.push(t) } });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** Three sessions as the kernel leaves them: each with events, a snapshot and a row that agree. */
async function seeded(path: string): Promise<void> {
  const store = new SqliteStore(path);
  await store.init();
  for (const id of ['sesn_a', 'sesn_b', 'sesn_c']) {
    await store.journal.commit(commitOf(id, 1, 2, { commandId: `cmd_${id}_1` }));
    await store.journal.commit(commitOf(id, 3, 4, { commandId: `cmd_${id}_2` }));
  }
  await store.transcripts.append({ session_id: 'sesn_a', path: 'h.jsonl', offset: 0, data: '{"type":"user"}\n' });
  await store.close();
}

describe('berth store check', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-store-check-'));
    path = join(dir, 'berth.db');
    await seeded(path);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('reports a consistent store as such and exits 0', async () => {
    const { code, out } = await run(['store', 'check', '--store', `sqlite:${path}`]);
    expect(code).toBe(ExitCode.ok);
    expect(out).toMatch(/checked: +3 session\(s\), 1 transcript file\(s\), 0 agent\(s\)/);
    expect(out).toMatch(/no problems found/);
  });

  it('reports each deliberately corrupted session, says what to do, and exits 1', async () => {
    const raw = new Database(path);
    raw.prepare("DELETE FROM journal WHERE session_id = 'sesn_b' AND seq = 2").run();
    raw.prepare("UPDATE snapshots SET version = 9 WHERE session_id = 'sesn_c'").run();
    raw.prepare("UPDATE transcript_chunks SET \"offset\" = 3 WHERE session_id = 'sesn_a'").run();
    raw.close();

    const { code, out } = await run(['store', 'check', '--store', `sqlite:${path}`]);
    expect(code).toBe(ExitCode.apiError);
    expect(out).toMatch(/3 problem\(s\)/);
    expect(out).toMatch(/ERROR journal_gap {2}sesn_b\n {2}the journal holds 3 event\(s\) between seq 1 and 4; 1 of seqs 1\.\.4 are missing\n {2}what to do: .*docs\/deploy\.md/);
    expect(out).toMatch(/WARNING snapshot_ahead {2}sesn_c\n {2}the snapshot is at seq 9, past the journal's last seq 4/);
    expect(out).toMatch(/ERROR transcript_gap {2}sesn_a h\.jsonl/);
    expect(out).not.toMatch(/ {2}sesn_a\n/);
  });

  it('prints the report as JSON with --json', async () => {
    const raw = new Database(path);
    raw.prepare("UPDATE sessions SET last_seq = 2 WHERE id = 'sesn_a'").run();
    raw.close();
    const { code, out } = await run(['--json', 'store', 'check', '--store', `sqlite:${path}`]);
    expect(code).toBe(ExitCode.apiError);
    expect(JSON.parse(out)).toMatchObject({
      checked: { sessions: 3, transcripts: 1, agents: 0 },
      outbox: { events: 12, dangling: 0 },
      findings: [{ kind: 'row_behind', severity: 'warning', subject: 'sesn_a', detail: 'the read-model row is at seq 2, the journal at 4' }],
    });
  });

  it('refuses a store file that does not exist instead of creating an empty one', async () => {
    const missing = join(dir, 'nope', 'berth.db');
    const { code, err } = await run(['store', 'check', '--store', `sqlite:${missing}`]);
    expect(code).toBe(ExitCode.apiError);
    expect(err).toContain(`no database file at ${missing}`);
    expect(existsSync(missing)).toBe(false);
  });
});

describe('berth store backup', () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-store-backup-'));
    path = join(dir, 'berth.db');
    await seeded(path);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('writes a copy that opens as a store and checks clean, and never overwrites a file', async () => {
    const copy = join(dir, 'backup.db');
    const made = await run(['store', 'backup', copy, '--store', `sqlite:${path}`]);
    expect(made.code).toBe(ExitCode.ok);
    expect(made.out).toMatch(/backup: +.*backup\.db/);
    const checked = await run(['store', 'check', '--store', `sqlite:${copy}`]);
    expect(checked.code).toBe(ExitCode.ok);
    expect(checked.out).toMatch(/3 session\(s\)/);

    const again = await run(['store', 'backup', copy, '--store', `sqlite:${path}`]);
    expect(again.code).toBe(ExitCode.apiError);
    expect(again.err).toMatch(/already exists/);
  });

  it('points a MongoDB store at mongodump instead', async () => {
    const { code, err } = await run(['store', 'backup', join(dir, 'x.db'), '--store', 'mongodb://db.invalid/berth']);
    expect(code).toBe(ExitCode.apiError);
    expect(err).toMatch(/mongodump --oplog/);
  });
});
