import { describeStoreContract } from '@berth/store/contract';
import { MemoryStore } from './memory-store';

describeStoreContract('in-memory', async () => ({ store: new MemoryStore() }));
