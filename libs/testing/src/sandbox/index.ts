export * from './in-memory-sandbox-runtime';
export * from './docker-engine';
export { InMemoryWorkspaces } from './in-memory-workspaces';
export * from './workspace-mounts';
export * from './in-memory-sandbox-images';
export * from './private-docker-engine';
export * from './runtime-contract';
