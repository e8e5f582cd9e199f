export { backupStore, createStore, parseStoreUrl, type CreateStoreOptions, type StoreTarget } from './create-store';
export { checkStore, type CheckOptions, type Finding, type StoreReport } from './check';
export type { BackupResult } from './sqlite/backup';
export { SqliteStore } from './sqlite/sqlite-store';
export type { SqliteOptions } from './sqlite/sqlite-db';
export type { SqliteStoreOptions } from './sqlite/sqlite-store';
export { DirectoryBlobStore } from './blobs/directory-blobs';
export { MongoStore, type MongoStoreOptions } from './mongo/mongo-store';
export { isStoreUnavailable } from './store-errors';
