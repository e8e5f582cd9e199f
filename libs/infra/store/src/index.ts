export { createStore } from './create-store';
export { SqliteStore } from './sqlite/sqlite-store';
export type { SqliteOptions } from './sqlite/sqlite-db';
export { MongoStore, type MongoStoreOptions } from './mongo/mongo-store';
export { isStoreUnavailable } from './store-errors';
