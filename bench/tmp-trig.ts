import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqliteStore } from '@berth/store';
import { commitOf } from '@berth/store/contract';
(async () => {
  let through = 0;
  for (let i = 0; i < 400; i++) {
    const dir = mkdtempSync(join(tmpdir(), 'trig-'));
    const path = join(dir, 'nested', 'berth.db');
    const schema = new SqliteStore(path); await schema.init(); await schema.close();
    const faults = new Database(path, { timeout: 10_000 });
    faults.exec(`CREATE TABLE contract_faults (refuse_rows INTEGER NOT NULL); INSERT INTO contract_faults VALUES (0);
    CREATE TRIGGER f1 BEFORE INSERT ON sessions WHEN (SELECT refuse_rows FROM contract_faults) = 1 BEGIN SELECT RAISE(ABORT, 'no'); END;
    CREATE TRIGGER f2 BEFORE UPDATE ON sessions WHEN (SELECT refuse_rows FROM contract_faults) = 1 BEGIN SELECT RAISE(ABORT, 'no'); END;`);
    const store = new SqliteStore(path, { synchronous: 'normal' });
    await store.init(); await store.init();
    await store.journal.commit(commitOf('sesn_1', 1, 1, { commandId: 'cmd_a' }));
    faults.prepare('UPDATE contract_faults SET refuse_rows = 1').run();
    try {
      await store.journal.commit(commitOf('sesn_1', 2, 3, { commandId: 'cmd_b' }));
      through++;
      const raw = (store as any).db.raw;
      console.log('THROUGH at', i, 'flag seen by store:', raw.prepare('SELECT refuse_rows FROM contract_faults').get(), 'triggers:', raw.prepare("SELECT name FROM sqlite_master WHERE type='trigger'").all(), 'row:', raw.prepare('SELECT last_seq FROM sessions').all(), 'journal:', raw.prepare('SELECT seq FROM journal').all());
    } catch { /* expected */ }
    faults.close();
    await store.close(); rmSync(dir, { recursive: true, force: true });
  }
  console.log('through', through);
})();
