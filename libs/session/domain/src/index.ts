export * from './state';
export * from './evolve';
export * from './decide';
export * from './guards';
export * from './lease';
export * from './rebuild-wait';
export { planRecovery, type RecoveryPlan, type RecoveryReason } from './deciders/recovery';
export * from './read/recovery-fields';
export * from './read/session-view';
