import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConcurrencyError } from '@berth/core';
import { describeStoreContract } from './contract';
import { batch } from './contract/fixtures';
import { SqliteStore } from './sqlite/sqlite-store';

describeStoreContract('SQLite file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'berth-store-'));
  return {
    store: new SqliteStore(join(dir, 'nested', 'berth.db'), { synchronous: 'normal' }),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describeStoreContract('SQLite :memory:', async () => ({ store: new SqliteStore(':memory:') }));

describe('SQLite file shared by two connections (two kernels, or a restart)', () => {
  it("makes the second writer of a seq lose with a ConcurrencyError and see the first writer's events", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-store-'));
    const path = join(dir, 'berth.db');
    const one = new SqliteStore(path, { synchronous: 'normal' });
    const two = new SqliteStore(path, { synchronous: 'normal' });
    try {
      await one.init();
      await two.init();
      await one.journal.appendEvents('sesn_1', batch('sesn_1', 1, 2, 'cmd_one'));
      await expect(two.journal.appendEvents('sesn_1', batch('sesn_1', 2, 3, 'cmd_two'))).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await two.journal.lastSeq('sesn_1')).toBe(2);
      await two.journal.appendEvents('sesn_1', batch('sesn_1', 3, 3, 'cmd_two'));
      expect((await one.journal.readEvents('sesn_1')).map((e) => e.command_id)).toEqual(['cmd_one', 'cmd_one', 'cmd_two']);
      expect((await one.journal.unpublished(10)).map((e) => e.seq)).toEqual([1, 2, 3]);
    } finally {
      await one.close();
      await two.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
