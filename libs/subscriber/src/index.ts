export * from './event-subscriber';
