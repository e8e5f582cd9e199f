export * from './naming';
export * from './sandbox-config';
export * from './sandbox-spec';
export * from './lease';
export * from './warm-pool-policy';
export * from './package-image';
export * from './placement';
export * from './image-build-sweep';
