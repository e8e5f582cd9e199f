export * from './commands';
export * from './agents';
