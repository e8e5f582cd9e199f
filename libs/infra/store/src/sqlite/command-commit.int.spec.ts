import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConcurrencyError } from '@berth/core';
import type { CommandCommit } from '@berth/ports';
import { at, batch, session } from '../contract/fixtures';
import { SqliteStore } from './sqlite-store';

/** One command's commit: events from..to, the snapshot at `to`, the read-model row at `to`. */
function commitOf(sessionId: string, from: number, to: number, commandId: string, expectedVersion = from - 1): CommandCommit {
  return {
    sessionId,
    events: batch(sessionId, from, to, commandId),
    snapshot: { snapshot: { sessionId, version: to, state: { folded: to }, updatedAt: at(to) }, expectedVersion },
    record: session({ id: sessionId, last_seq: to, title: commandId }),
  };
}

describe('SQLite commitCommand (one transaction per command, group commit)', () => {
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

  it("writes the command's events, its snapshot and its read-model row", async () => {
    await store.journal.commitCommand(commitOf('sesn_1', 1, 2, 'cmd_a'));
    expect(await commandIds('sesn_1')).toEqual(['1:cmd_a', '2:cmd_a']);
    expect(await store.snapshots.load('sesn_1')).toMatchObject({ version: 2, state: { folded: 2 } });
    expect(await store.sessions.getById('sesn_1')).toMatchObject({ last_seq: 2, title: 'cmd_a' });
    expect((await store.journal.unpublished(10)).map((e) => e.seq)).toEqual([1, 2]);
  });

  it('refuses a taken seq with a ConcurrencyError and writes nothing of that commit', async () => {
    await store.journal.commitCommand(commitOf('sesn_1', 1, 2, 'cmd_a'));
    await expect(store.journal.commitCommand(commitOf('sesn_1', 2, 3, 'cmd_late', 2))).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await commandIds('sesn_1')).toEqual(['1:cmd_a', '2:cmd_a']);
    expect(await store.snapshots.load('sesn_1')).toMatchObject({ version: 2 });
    expect(await store.sessions.getById('sesn_1')).toMatchObject({ last_seq: 2, title: 'cmd_a' });
  });

  it('rolls the events back when a later write of the same commit fails', async () => {
    const valid = commitOf('sesn_1', 1, 1, 'cmd_a');
    // A snapshot state JSON cannot encode: the snapshot write throws after the events were inserted.
    const broken: CommandCommit = { ...valid, snapshot: { snapshot: { ...valid.snapshot!.snapshot, state: { n: 1n } }, expectedVersion: 0 } };
    await expect(store.journal.commitCommand(broken)).rejects.toThrow(/BigInt/);
    expect(await store.journal.lastSeq('sesn_1')).toBe(0);
    expect(await store.sessions.getById('sesn_1')).toBeNull();
    expect(await store.journal.unpublished(10)).toEqual([]);
  });

  it('commits commands submitted together in submission order; a conflicting one fails alone', async () => {
    // Submitted in one turn without awaiting, so they share one group.
    const results = await Promise.allSettled([
      store.journal.commitCommand(commitOf('sesn_1', 1, 2, 'cmd_1a')),
      store.journal.commitCommand(commitOf('sesn_2', 1, 1, 'cmd_2a')),
      store.journal.commitCommand(commitOf('sesn_1', 3, 3, 'cmd_1b', 2)),
      store.journal.commitCommand(commitOf('sesn_2', 1, 1, 'cmd_2_loser')),
      store.journal.commitCommand(commitOf('sesn_3', 1, 1, 'cmd_3a')),
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
    expect((await store.journal.unpublished(10)).map((e) => `${e.session_id}:${e.seq}`)).toEqual(['sesn_1:1', 'sesn_1:2', 'sesn_2:1', 'sesn_1:3', 'sesn_3:1']);
  });

  it('fences a second connection on the same file (another kernel process)', async () => {
    const other = new SqliteStore(join(dir, 'berth.db'));
    try {
      await other.init();
      await store.journal.commitCommand(commitOf('sesn_1', 1, 1, 'cmd_first'));
      await expect(other.journal.commitCommand(commitOf('sesn_1', 1, 1, 'cmd_second'))).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await commandIds('sesn_1')).toEqual(['1:cmd_first']);
    } finally {
      await other.close();
    }
  });

  it('marks events of several sessions published in one call', async () => {
    await Promise.all([store.journal.commitCommand(commitOf('sesn_1', 1, 2, 'cmd_a')), store.journal.commitCommand(commitOf('sesn_2', 1, 1, 'cmd_b'))]);
    await store.journal.markPublishedMany([
      { sessionId: 'sesn_1', seqs: [1, 2] },
      { sessionId: 'sesn_2', seqs: [1] },
    ]);
    expect(await store.journal.unpublished(10)).toEqual([]);
  });
});
