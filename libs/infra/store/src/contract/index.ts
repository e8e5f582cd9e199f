export { describeStoreContract, type StoreFactory, type StoreUnderTest } from './store-contract';
