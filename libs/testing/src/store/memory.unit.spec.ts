import { describeStoreContract } from '@berth/store/contract';
import { MemoryStore } from './memory-store';

describeStoreContract('in-memory', async () => {
  const store = new MemoryStore();
  return {
    store,
    failRowWrites: async () => {
      store.journal.failRowWrites = true;
      return async () => {
        store.journal.failRowWrites = false;
      };
    },
    failWebhookWrites: async () => {
      store.webhooks.failDeliveryWrites = true;
      return async () => {
        store.webhooks.failDeliveryWrites = false;
      };
    },
  };
});
