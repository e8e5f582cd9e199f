import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConcurrencyError } from '@berth/core';
import { commitOf } from '../contract/fixtures';
import { SqliteStore } from './sqlite-store';

// What the shared contract does not pin: SQLite's group commit and its fencing of another process.
describe('SQLite commits (group commit, one transaction per command)', () => {
  let dir: string;
  let store: SqliteStore;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-commit-'));
    store = new SqliteStore(join(dir, 'berth.db'));
    await store.init();
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const commandIds = async (sessionId: string) => (await store.journal.readEvents(sessionId)).map((e) => `${e.seq}:${e.command_id}`);

  it('commits commands submitted together in submission order; a conflicting one fails alone', async () => {
    // Submitted in one turn without awaiting, so they share one group.
    const results = await Promise.allSettled([
      store.journal.commit(commitOf('sesn_1', 1, 2, { commandId: 'cmd_1a' })),
      store.journal.commit(commitOf('sesn_2', 1, 1, { commandId: 'cmd_2a' })),
      store.journal.commit(commitOf('sesn_1', 3, 3, { commandId: 'cmd_1b' })),
      store.journal.commit(commitOf('sesn_2', 1, 1, { commandId: 'cmd_2_loser' })),
      store.journal.commit(commitOf('sesn_3', 1, 1, { commandId: 'cmd_3a' })),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((results[3] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrencyError);
    expect(await commandIds('sesn_1')).toEqual(['1:cmd_1a', '2:cmd_1a', '3:cmd_1b']);
    expect(await commandIds('sesn_2')).toEqual(['1:cmd_2a']);
    expect(await commandIds('sesn_3')).toEqual(['1:cmd_3a']);
    expect(await store.sessions.getById('sesn_1')).toMatchObject({ last_seq: 3, title: 'cmd_1b' });
    expect(await store.sessions.getById('sesn_2')).toMatchObject({ title: 'cmd_2a' });
    expect(await store.snapshots.load('sesn_1')).toMatchObject({ version: 3 });
    // The outbox hands them out in commit order.
    expect((await store.journal.unpublished({ limit: 10 })).events.map((e) => `${e.session_id}:${e.seq}`)).toEqual(['sesn_1:1', 'sesn_1:2', 'sesn_2:1', 'sesn_1:3', 'sesn_3:1']);
  });

  it('fences a second connection on the same file (another kernel process)', async () => {
    const other = new SqliteStore(join(dir, 'berth.db'));
    try {
      await other.init();
      await store.journal.commit(commitOf('sesn_1', 1, 1, { commandId: 'cmd_first' }));
      await expect(other.journal.commit(commitOf('sesn_1', 1, 1, { commandId: 'cmd_second' }))).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await commandIds('sesn_1')).toEqual(['1:cmd_first']);
    } finally {
      await other.close();
    }
  });
});
