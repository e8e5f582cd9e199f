export * from './nats-server';
export * from './wait-until';
