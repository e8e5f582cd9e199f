export * from './nats';
export * from './model-servers';
export * from './sandbox';
export * from './store';
export * from './egress';
export * from './logging/test-loggers';
export * from './otlp/otlp-trace-receiver';
export * from './metrics/prometheus-text';
