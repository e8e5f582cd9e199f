import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkStore } from '../check';
import { commitOf } from '../contract/fixtures';
import { backupStore } from '../create-store';
import { SqliteStore } from './sqlite-store';

const REPO = resolve(__dirname, '..', '..', '..', '..', '..');

/** Starts the commit loop in its own process and resolves once it has committed at least `commits`. */
function startWriter(path: string, commits: number): Promise<{ child: ChildProcess; progress: () => number }> {
  const child = spawn(process.execPath, ['-r', '@swc-node/register', join(__dirname, '..', 'testing', 'commit-loop.ts'), path], {
    cwd: REPO,
    env: { ...process.env, SWC_NODE_PROJECT: join(REPO, 'tsconfig.json') },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let last = -1;
  return new Promise((done, fail) => {
    child.once('exit', (code) => fail(new Error(`the writer exited early (${code})`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      last = Number(chunk.toString().trim().split('\n').pop());
      if (last >= commits) done({ child, progress: () => last });
    });
  });
}

describe('SQLite online backup while another process commits', () => {
  let dir: string;
  let writer: ChildProcess | null = null;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-backup-'));
  });
  afterEach(() => {
    writer?.kill('SIGKILL');
    writer = null;
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes copies in which every session agrees with its journal, and a restored copy takes new commits', async () => {
    const path = join(dir, 'berth.db');
    const { child, progress } = await startWriter(path, 100);
    writer = child;
    const copies: { path: string; committedBefore: number }[] = [];
    for (let i = 0; i < 3; i++) {
      const before = progress();
      const result = await backupStore(`sqlite:${path}`, join(dir, `backup-${i}.db`));
      // The writer printed `before` after its commit number `before` returned: that many + 1 were acknowledged.
      copies.push({ path: result.path, committedBefore: before + 1 });
      // Keep taking the next copy only once the writer has moved on, so each copy is of a busier store.
      while (progress() === before) await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGKILL');
    writer = null;

    for (const copy of copies) {
      const store = new SqliteStore(copy.path);
      await store.init();
      try {
        const report = await checkStore(store.inspection);
        expect(report.findings).toEqual([]);
        expect(report.checked.sessions).toBe(8);
        expect(report.checked.transcripts).toBe(8);
        // Nothing acknowledged before the copy began is missing from it (a copy of the main file alone would lose the WAL's commits).
        let commands = 0;
        for (let s = 0; s < 8; s++) commands += new Set((await store.journal.readEvents(`sesn_${s}`)).map((e) => e.command_id)).size;
        expect(commands).toBeGreaterThanOrEqual(copy.committedBefore);
      } finally {
        await store.close();
      }
    }

    // Restore: the copy replaces the database (no -wal/-shm of the old one), and the platform goes on.
    const restored = join(dir, 'restored.db');
    copyFileSync(copies[2]?.path as string, restored);
    const store = new SqliteStore(restored);
    await store.init();
    try {
      const last = await store.journal.lastSeq('sesn_0');
      expect(last).toBeGreaterThan(0);
      await store.journal.commit(commitOf('sesn_0', last + 1, last + 1, { commandId: 'cmd_after_restore' }));
      expect(await store.sessions.getById('sesn_0')).toMatchObject({ last_seq: last + 1 });
      expect((await checkStore(store.inspection)).findings).toEqual([]);
    } finally {
      await store.close();
    }
  }, 60_000);
});
