export * from './kernel';
export * from './session-record';
export * from './flows/ports';
export * from './flows/session-ids';
export * from './flows/session-lifecycle';
