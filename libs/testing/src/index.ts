export * from './nats';
export * from './model-servers';
export * from './sandbox';
