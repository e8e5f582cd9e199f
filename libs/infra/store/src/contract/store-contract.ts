import type { BerthStore } from '@berth/ports';
import { journalContract } from './journal.contract';
import { keysContract } from './keys.contract';
import { readModelsContract } from './read-models.contract';
import { snapshotsContract } from './snapshots.contract';
import { transcriptsContract } from './transcripts.contract';
import { vaultsContract } from './vaults.contract';
import { webhooksContract } from './webhooks.contract';

/** A fresh, empty store per test, and how to throw it away afterwards. */
export type StoreUnderTest = { store: BerthStore; dispose?: () => Promise<void> };
export type StoreFactory = () => Promise<StoreUnderTest>;

/**
 * The one behaviour every BerthStore adapter must have. Each adapter's spec calls this with a
 * factory; the suite initialises each store twice (init must be idempotent) and closes it.
 */
export function describeStoreContract(name: string, factory: StoreFactory): void {
  describe(`${name} store contract`, () => {
    let current: StoreUnderTest | null = null;
    const store = (): BerthStore => {
      if (!current) throw new Error('store used outside a test');
      return current.store;
    };

    beforeEach(async () => {
      current = await factory();
      await current.store.init();
      await current.store.init();
    });

    afterEach(async () => {
      const done = current;
      current = null;
      await done?.store.close();
      await done?.dispose?.();
    });

    journalContract(store);
    snapshotsContract(store);
    readModelsContract(store);
    keysContract(store);
    transcriptsContract(store);
    webhooksContract(store);
    vaultsContract(store);
  });
}
