import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/** This process among the managers sharing the store: the holder of the leases it takes. */
export const managerInstanceId = (): string => `sandbox-manager:${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
