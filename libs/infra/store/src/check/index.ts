export { checkStore, type CheckOptions, type StoreReport } from './check-store';
export type { Finding } from './rules';
