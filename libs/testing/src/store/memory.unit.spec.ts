import { REFUSED_DELIVERY_ID, describeStoreContract } from '@berth/store/contract';
import { MemoryStore } from './memory-store';

describeStoreContract('in-memory', async () => {
  const store = new MemoryStore();
  store.webhooks.refusedDeliveryId = REFUSED_DELIVERY_ID;
  return {
    store,
    failRowWrites: async () => {
      store.journal.failRowWrites = true;
      return async () => {
        store.journal.failRowWrites = false;
      };
    },
  };
});
