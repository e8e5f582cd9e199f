export { createStore, type CreateStoreOptions } from './create-store';
export { SqliteStore } from './sqlite/sqlite-store';
export type { SqliteOptions } from './sqlite/sqlite-db';
export type { SqliteStoreOptions } from './sqlite/sqlite-store';
export { DirectoryBlobStore } from './blobs/directory-blobs';
export { MongoStore, type MongoStoreOptions } from './mongo/mongo-store';
export { isStoreUnavailable } from './store-errors';
