export * from './recorded-kubernetes-api';
export * from './rbac-check';
