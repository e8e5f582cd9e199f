export * from './claim-workspaces';
export * from './egress-trust';
export * from './kubernetes-sandbox-runtime';
export * from './kubernetes-sandboxes';
export * from './pod-sandbox-names';
export * from './sandbox-network-policy';
export * from './sandbox-resource';
