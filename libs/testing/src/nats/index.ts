export * from './nats-server';
export * from './wait-until';
export * from './nats-cluster';
