export * from './nats';
export * from './model-servers';
export * from './sandbox';
export * from './store';
export * from './git/git-http-server';
