export * from './recorded-kubernetes-api';
