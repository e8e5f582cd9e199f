export * from './kubernetes-sandbox-runtime';
export * from './sandbox-resource';
