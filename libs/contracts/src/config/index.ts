export * from './metadata';
export * from './agent-config';
export * from './agent-tools';
export * from './environment-config';
export * from './harness-support';
export * from './config-issues';
