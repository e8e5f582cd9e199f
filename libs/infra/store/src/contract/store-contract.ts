import type { BerthStore } from '@berth/ports';
import { commitContract } from './commit.contract';
import { coordinationContract } from './coordination.contract';
import { inspectionContract } from './inspection.contract';
import { filesContract } from './files.contract';
import { journalContract } from './journal.contract';
import { keysContract } from './keys.contract';
import { limitsContract } from './limits.contract';
import { readModelsContract } from './read-models.contract';
import { transcriptsContract } from './transcripts.contract';
import { vaultsContract } from './vaults.contract';
import { webhooksContract } from './webhooks.contract';

/**
 * A fresh, empty store per test, and how to throw it away afterwards. `failRowWrites` makes the
 * store itself refuse writes of session read-model rows (a SQLite trigger, a MongoDB validator, a
 * flag in memory) until the function it returns is called: how the suite fails a commit between
 * its writes without test-only code in the adapters. The store must also refuse to write a webhook
 * delivery whose id is REFUSED_DELIVERY_ID (likewise), so a configuration change fails between
 * its two writes.
 */
export type StoreUnderTest = { store: BerthStore; failRowWrites: () => Promise<() => Promise<void>>; dispose?: () => Promise<void> };

/** The webhook delivery id every store under test refuses to write. */
export const REFUSED_DELIVERY_ID = 'whd_refused';
export type StoreFactory = () => Promise<StoreUnderTest>;

/**
 * The one behaviour every BerthStore adapter must have. Each adapter's spec calls this with a
 * factory; the suite initialises each store twice (init must be idempotent) and closes it.
 */
export function describeStoreContract(name: string, factory: StoreFactory): void {
  describe(`${name} store contract`, () => {
    let current: StoreUnderTest | null = null;
    const running = (): StoreUnderTest => {
      if (!current) throw new Error('store used outside a test');
      return current;
    };
    const store = () => running().store;

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

    commitContract(store, () => running().failRowWrites());
    journalContract(store);
    readModelsContract(store);
    keysContract(store);
    transcriptsContract(store);
    limitsContract(store);
    inspectionContract(store);
    filesContract(store);
    webhooksContract(store);
    vaultsContract(store);
    coordinationContract(store);
  });
}
