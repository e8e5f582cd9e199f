import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { systemClock } from '@berth/core';
import { createSessionKernel } from '@berth/session-kernel';
import { commandsFor } from '@berth/session-kernel/testing';
import { createStore } from '@berth/store';
import { runCli } from '../cli';
import { ExitCode } from '../exit-codes';

// `berth replay` against a real SQLite file the production kernel wrote.

describe('berth replay', () => {
  const dir = mkdtempSync(join(tmpdir(), 'berth-replay-'));
  const file = join(dir, 'berth.db');
  const url = `sqlite:${file}`;
  const ids = ['sesn_replay_a', 'sesn_replay_b'];

  beforeAll(async () => {
    const store = createStore(url);
    await store.init();
    try {
      const kernel = createSessionKernel({ journal: store.journal, snapshots: store.snapshots, clock: systemClock });
      for (const id of ids) {
        const c = commandsFor(id, 'owner_replay');
        for (const command of [c.create(), c.bind(), c.message('turn_1'), c.complete('turn_1'), c.message('turn_2')]) expect((await kernel.execute(command)).ok).toBe(true);
      }
    } finally {
      await store.close();
    }
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const replay = async (...args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['replay', ...args, '--store', url], { env: {}, io: { out: (t) => out.push(t), err: (t) => err.push(t) } });
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('reports no difference for every session the kernel wrote', async () => {
    const all = await replay('all', '--owner', 'owner_replay', '--json');
    expect(all.code).toBe(ExitCode.ok);
    const parsed = JSON.parse(all.out) as { ok: boolean; sessions: { session_id: string; last_seq: number; differences: unknown[] }[] };
    expect(parsed.ok).toBe(true);
    expect(parsed.sessions.map((s) => [s.session_id, s.last_seq, s.differences])).toEqual(ids.map((id) => [id, 8, []]));
    const one = await replay(ids[0]);
    expect(one).toMatchObject({ code: ExitCode.ok, out: `${ids[0]}: 8 events, snapshot at #8, read model at #8: no difference` });
  });

  it('prints the difference in a corrupted snapshot and exits 1', async () => {
    const db = new Database(file);
    try {
      const row = db.prepare('SELECT state FROM snapshots WHERE session_id = ?').get(ids[1]) as { state: string };
      const state = JSON.parse(row.state) as { session: { conversation: string; queued: unknown[] } };
      state.session.conversation = 'IDLE';
      db.prepare('UPDATE snapshots SET state = ? WHERE session_id = ?').run(JSON.stringify(state), ids[1]);
    } finally {
      db.close();
    }
    const result = await replay(ids[1]);
    expect(result.code).toBe(ExitCode.apiError);
    expect(result.out).toBe(`${ids[1]}: 8 events, snapshot at #8, read model at #8: 1 difference\n  snapshot conversation: stored "IDLE", replayed "RUNNING"`);
    const all = await replay('all', '--owner', 'owner_replay');
    expect(all.code).toBe(ExitCode.apiError);
    expect(all.out).toContain(`${ids[0]}: 8 events, snapshot at #8, read model at #8: no difference`);
  });

  it('answers an unknown session with exit 4, a missing database file without creating it, and "all" without --owner as usage', async () => {
    expect(await replay('sesn_nope')).toMatchObject({ code: ExitCode.notFound, err: expect.stringContaining('no session sesn_nope') });
    const missing = join(dir, 'absent.db');
    const err: string[] = [];
    expect(await runCli(['replay', 'sesn_x', '--store', `sqlite:${missing}`], { env: {}, io: { out: () => undefined, err: (t) => err.push(t) } })).toBe(ExitCode.apiError);
    expect(err.join('')).toContain(`no database file at ${missing}`);
    expect(existsSync(missing)).toBe(false);
    expect(await replay('all')).toMatchObject({ code: ExitCode.usage, err: 'error: replay all needs --owner <owner-id>' });
  });
});
