export * from './nats';
export * from './model-servers';
export * from './sandbox';
export * from './store';
export * from './egress';
