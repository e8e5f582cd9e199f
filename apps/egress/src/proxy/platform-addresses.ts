import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import { canonicalAddress, isIpLiteral } from '@berth/egress-domain';

/**
 * Addresses of the platform itself that may well be public: this machine's own interfaces (a
 * gateway bound to 0.0.0.0 on a VM with a public address) and the hosts of the broker and store
 * the services use. Private, loopback and link-local ranges are refused anyway; these are refused
 * on top. Refreshed now and then (interfaces come and go).
 */
export class PlatformAddresses {
  private addresses = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly serviceHosts: readonly string[]) {}

  async start(refreshMs = 60_000): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), refreshMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }

  has(address: string): boolean {
    return this.addresses.has(canonicalAddress(address));
  }

  private async refresh(): Promise<void> {
    const next = new Set<string>();
    for (const list of Object.values(networkInterfaces())) for (const a of list ?? []) next.add(canonicalAddress(a.address.split('%')[0]));
    for (const host of this.serviceHosts) {
      if (isIpLiteral(host)) {
        next.add(canonicalAddress(host));
        continue;
      }
      try {
        for (const a of await lookup(host, { all: true })) next.add(canonicalAddress(a.address));
      } catch {
        // Not resolvable from here: nothing to add.
      }
    }
    this.addresses = next;
  }
}

/** The host part of a service URL (`nats://nats:4222`, `mongodb://user:pw@db1:27017,db2/berth`), for `PlatformAddresses`. */
export function hostsOfServiceUrl(url: string): string[] {
  const match = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/]*@)?([^/?]+)/i.exec(url);
  if (match === null) return [];
  return match[1]
    .split(',')
    .map((hostPort) => (hostPort.startsWith('[') ? hostPort.slice(1, hostPort.indexOf(']')) : hostPort.split(':')[0]))
    .filter((h) => h !== '');
}
