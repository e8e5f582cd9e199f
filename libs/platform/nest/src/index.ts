export * from './transport/jetstream.context';
export * from './transport/jetstream.transport';
export * from './transport/jetstream-errors.filter';
export * from './transport/create-microservice';
export * from './config/load-config';
export * from './lifecycle/graceful-shutdown';
export * from './logging/nest-logger';
