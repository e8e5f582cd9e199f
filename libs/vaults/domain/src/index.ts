export * from './refresh-policy';
export * from './token-request';
export * from './token-answer';
export * from './refresh-state';
export * from './validation';
