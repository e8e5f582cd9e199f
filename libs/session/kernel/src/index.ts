export * from './kernel';
export * from './session-record';
