export * from './kernel';
export * from './session-record';
export * from './replay';
