export * from './webhooks';
export * from './vaults';
