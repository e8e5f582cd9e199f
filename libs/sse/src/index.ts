export * from './sse-parser';
