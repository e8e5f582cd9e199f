export * from './apt-repository';
export * from './npm-registry';
export * from './static-file-server';
