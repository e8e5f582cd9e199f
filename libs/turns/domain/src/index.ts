export * from './policy';
export * from './inputs';
export * from './outputs';
export * from './turn-state';
export * from './command-ids';
export * from './turn-reconciler.workflow';
