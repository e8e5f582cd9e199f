export * from './webhook-events';
export * from './signature';
export * from './delivery-policy';
export * from './deliveries';
export * from './target-policy';
