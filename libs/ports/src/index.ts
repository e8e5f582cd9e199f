export type * from './session-store.port';
export type * from './read-models.port';
export type * from './command-bus.port';
export type * from './sandbox-runtime.port';
export type * from './logger.port';
