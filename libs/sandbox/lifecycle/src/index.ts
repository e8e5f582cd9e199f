export * from './warm-pool';
export * from './sandbox-provisioner';
export * from './death-watcher';
export * from './sandbox-bindings';
export * from './lease-sweep';
export * from './startup-reconcile';
export * from './multi-host-runtime';
export * from './multi-host-images';
