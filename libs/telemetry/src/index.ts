export * from './logging/create-logger';
export * from './logging/secret-scrubber';
export * from './metrics/berth-metrics';
export * from './metrics/metrics-server';
export * from './tracing/tracing';
export * from './tracing/spans';
export * from './service-telemetry';
export * from './logging/failed-to-start';
