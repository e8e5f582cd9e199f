export * from './content';
export * from './tokens';
export * from './commands';
export * from './events';
export * from './subjects';
export * from './outcome';
export * from './parse';
export * from './public-events';
