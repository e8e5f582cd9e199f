import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { ConcurrencyError } from '@berth/core';
import { REFUSED_DELIVERY_ID, describeStoreContract } from './contract';
import { commitOf } from './contract/fixtures';
import { SqliteStore } from './sqlite/sqlite-store';

describeStoreContract('SQLite file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'berth-store-'));
  const path = join(dir, 'nested', 'berth.db');
  // Triggers that make SQLite itself abort any write of a session row while a flag is set. They exist
  // before the store under test opens the file, so flipping the fault is a data change its next
  // transaction sees, never a schema change it would have to notice.
  const schema = new SqliteStore(path);
  await schema.init();
  await schema.close();
  const faults = new Database(path, { timeout: 10_000 });
  faults.exec(`CREATE TABLE contract_faults (refuse_rows INTEGER NOT NULL); INSERT INTO contract_faults VALUES (0);
    CREATE TRIGGER contract_fail_row_insert BEFORE INSERT ON sessions WHEN (SELECT refuse_rows FROM contract_faults) = 1 BEGIN SELECT RAISE(ABORT, 'row writes refused'); END;
    CREATE TRIGGER contract_fail_row_update BEFORE UPDATE ON sessions WHEN (SELECT refuse_rows FROM contract_faults) = 1 BEGIN SELECT RAISE(ABORT, 'row writes refused'); END;
    CREATE TRIGGER contract_refuse_delivery BEFORE INSERT ON webhook_deliveries WHEN NEW.id = '${REFUSED_DELIVERY_ID}' BEGIN SELECT RAISE(ABORT, 'delivery refused'); END;`);
  const refuseRows = (on: boolean) => faults.prepare('UPDATE contract_faults SET refuse_rows = ?').run(on ? 1 : 0);
  return {
    store: new SqliteStore(path, { synchronous: 'normal' }),
    failRowWrites: async () => {
      refuseRows(true);
      return async () => void refuseRows(false);
    },
    dispose: async () => {
      faults.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('SQLite file shared by two connections (two kernels, or a restart)', () => {
  it("makes the second writer of a seq lose with a ConcurrencyError and see the first writer's events", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-store-'));
    const path = join(dir, 'berth.db');
    const one = new SqliteStore(path, { synchronous: 'normal' });
    const two = new SqliteStore(path, { synchronous: 'normal' });
    try {
      await one.init();
      await two.init();
      await one.journal.commit(commitOf('sesn_1', 1, 2, { commandId: 'cmd_one' }));
      await expect(two.journal.commit(commitOf('sesn_1', 2, 3, { commandId: 'cmd_two' }))).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await two.journal.lastSeq('sesn_1')).toBe(2);
      await two.journal.commit(commitOf('sesn_1', 3, 3, { commandId: 'cmd_two' }));
      expect((await one.journal.readEvents('sesn_1')).map((e) => e.command_id)).toEqual(['cmd_one', 'cmd_one', 'cmd_two']);
      expect((await one.journal.unpublished({ limit: 10 })).events.map((e) => e.seq)).toEqual([1, 2, 3]);
      expect(await one.sessions.getById('sesn_1')).toMatchObject({ last_seq: 3, title: 'cmd_two' });
    } finally {
      await one.close();
      await two.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
