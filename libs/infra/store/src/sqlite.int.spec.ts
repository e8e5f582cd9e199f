import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeStoreContract } from './contract';
import { SqliteStore } from './sqlite/sqlite-store';

describeStoreContract('SQLite file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'berth-store-'));
  return {
    store: new SqliteStore(join(dir, 'nested', 'berth.db'), { synchronous: 'normal' }),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

describeStoreContract('SQLite :memory:', async () => ({ store: new SqliteStore(':memory:') }));
