export * from './decider';
export * from './errors';
export * from './ids';
export * from './ports';
export * from './time';
export * from './keyed-lock';
export * from './addresses';
export * from './async-queue';
