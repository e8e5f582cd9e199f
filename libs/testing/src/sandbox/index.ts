export * from './in-memory-sandbox-runtime';
export * from './docker-engine';
export * from './in-memory-sandbox-images';
