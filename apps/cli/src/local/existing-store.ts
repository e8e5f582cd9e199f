import { existsSync } from 'node:fs';
import { createStore } from '@berth/store';
import type { BerthStore } from '@berth/ports';

export const DEFAULT_STORE_URL = 'sqlite:./.berth/berth.db';

/** The SQLite file a store URL names when it does not exist (local commands read; they never create a database). */
export function missingSqliteFile(storeUrl: string): string | null {
  const path = /^sqlite:(?:\/\/)?([^?]+)/.exec(storeUrl)?.[1];
  return path !== undefined && path !== ':memory:' && !existsSync(path) ? path : null;
}

/** Opens and initialises the store at `storeUrl`, refusing a SQLite file that is not there. */
export async function openExistingStore(storeUrl: string): Promise<BerthStore> {
  const missing = missingSqliteFile(storeUrl);
  if (missing !== null) throw new Error(`no database file at ${missing}. Has Berth run with this BERTH_STORE_URL? (npm start creates .berth/berth.db)`);
  const store = createStore(storeUrl);
  await store.init();
  return store;
}
