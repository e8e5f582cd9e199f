export type * from './session-store.port';
export type * from './read-models.port';
export type * from './command-bus.port';
export type * from './sandbox-runtime.port';
export type * from './logger.port';
export type * from './secrets.port';
export type * from './webhooks.port';
export type * from './vaults.port';
