import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { addressRefusal, type TargetPolicy } from '@berth/webhooks-domain';

/** Name resolution for outbound requests (the system resolver by default; tests map a name to loopback). */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true });

/** A connection the target policy refused: no request was sent. */
export class TargetRefused extends Error {}

/**
 * A `lookup` for Node's HTTP clients that refuses every resolved address the target policy does
 * not allow: the check sits where the connection is made, so a name that resolves inward (or is
 * rebound to after it was registered) is never connected to. Used for every request the gateway
 * makes to a URL an API user chose (webhook deliveries, OAuth token endpoints).
 */
export function guardedLookup(policy: TargetPolicy, resolve: Resolve = systemResolve): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname).then(
      (found) => {
        const addresses = options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        const refusal = addresses.map((a) => addressRefusal(a.address, policy)).find((r) => r !== null);
        if (refusal) return callback(new TargetRefused(`${hostname}: ${refusal}`), '', 0);
        const [first] = addresses;
        if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
        if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
