export * from './nats';
export * from './model-servers';
export * from './mcp';
export * from './sandbox';
export * from './store';
