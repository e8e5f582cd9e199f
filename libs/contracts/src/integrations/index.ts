export * from './webhooks';
export * from './vaults';
export * from './secrets';
