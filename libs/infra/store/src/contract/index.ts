export { REFUSED_DELIVERY_ID, describeStoreContract, type StoreFactory, type StoreUnderTest } from './store-contract';
export { commitOf } from './fixtures';
