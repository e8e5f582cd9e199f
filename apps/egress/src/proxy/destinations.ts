import { lookup } from 'node:dns/promises';
import type { Socket } from 'node:net';
import { canonicalAddress, classifyAddress, decideHost, isIpLiteral, isLocalName, type DenialInput, type EgressPolicy } from '@berth/egress-domain';
import type { PlatformAddresses } from './platform-addresses';
import { connectWithin } from './connect-within';
import { connectThroughUpstream, type UpstreamProxy } from './upstream-proxy';

/** How an allowed destination is reached: a pinned address (checked, so a second DNS answer cannot differ), or the upstream proxy. */
export type Route = Readonly<{ kind: 'direct'; address: string }> | Readonly<{ kind: 'upstream'; proxy: UpstreamProxy }>;

export type Verdict = Readonly<{ allowed: true; route: Route }> | Readonly<{ allowed: false; denial: Omit<DenialInput, 'environmentId'> }>;

/** The host could not be looked up (or the upstream refused): a 502, not a policy refusal. */
export class UnreachableError extends Error {}

export type DestinationsDeps = Readonly<{
  platform: PlatformAddresses;
  upstream: UpstreamProxy | null;
  connectTimeoutMs: number;
  resolve?: (host: string) => Promise<readonly string[]>;
}>;

/** The ranges an operator's trusted mirror may be in (an internal network); never loopback, link-local or this machine. */
const PRIVATE_NETWORKS = new Set(['private', 'uniqueLocal']);

/** `privateNetworks`: the destination is an operator's trusted mirror for an image build, so private ranges are allowed. */
export type CheckOptions = Readonly<{ privateNetworks?: boolean }>;

const systemResolve = async (host: string): Promise<string[]> => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Where the egress lets a sandbox go. First the environment's policy (`decideHost`), then the
 * platform rule, which no setting lifts: never an address of this machine, a private, loopback,
 * link-local or otherwise special range, or a platform service. Names are resolved here and the
 * connection goes to the checked address (DNS rebinding gets nowhere). Behind an upstream proxy
 * names are the proxy's to resolve; literal addresses and local names are still refused here.
 */
export class Destinations {
  private readonly resolveHost: (host: string) => Promise<readonly string[]>;

  constructor(private readonly deps: DestinationsDeps) {
    this.resolveHost = deps.resolve ?? systemResolve;
  }

  async check(policy: EgressPolicy | null, host: string, port: number, options: CheckOptions = {}): Promise<Verdict> {
    if (policy !== null) {
      const decision = decideHost(policy, host);
      if (!decision.allowed) return { allowed: false, denial: { host, port, reason: decision.reason, setting: decision.setting } };
    }
    return this.checkAddress(host, port, options);
  }

  /** The platform rule alone (for a model endpoint the operator does not vouch for). */
  async checkAddress(host: string, port: number, options: CheckOptions = {}): Promise<Verdict> {
    const refuse = (ip: string, range: string): Verdict => ({ allowed: false, denial: { host, port, reason: 'platform_address', setting: null, address: { ip, range } } });
    if (isIpLiteral(host)) {
      const range = this.rangeOf(host, options);
      return range === 'public' ? { allowed: true, route: this.routeTo(canonicalAddress(host)) } : refuse(canonicalAddress(host), range);
    }
    if (isLocalName(host)) return refuse(host, 'a name of this machine');
    if (this.deps.upstream !== null) return { allowed: true, route: { kind: 'upstream', proxy: this.deps.upstream } };
    let addresses: readonly string[];
    try {
      addresses = await this.resolveHost(host);
    } catch (error) {
      throw new UnreachableError(`could not resolve ${host}: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (addresses.length === 0) throw new UnreachableError(`could not resolve ${host}`);
    // Every answer must be public: a name that also points inside is refused as a whole.
    for (const address of addresses) {
      const range = this.rangeOf(address, options);
      if (range !== 'public') return refuse(canonicalAddress(address), range);
    }
    return { allowed: true, route: { kind: 'direct', address: canonicalAddress(addresses[0]) } };
  }

  /** A TCP connection to the destination (for CONNECT), through the upstream proxy when there is one. */
  async tunnel(route: Route, host: string, port: number): Promise<Socket> {
    if (route.kind === 'upstream') return connectThroughUpstream(route.proxy, host, port, this.deps.connectTimeoutMs);
    return connectWithin({ host: route.address, port }, this.deps.connectTimeoutMs);
  }

  /** `public` when the address may be reached (a trusted mirror's private one too), else the range that refuses it. */
  private rangeOf(address: string, options: CheckOptions): string {
    const range = classifyAddress(address);
    const reachable = range === 'public' || (options.privateNetworks === true && PRIVATE_NETWORKS.has(range));
    if (!reachable) return range;
    return this.deps.platform.has(address) ? 'an address of this machine or a platform service' : 'public';
  }

  private routeTo(address: string): Route {
    return this.deps.upstream === null ? { kind: 'direct', address } : { kind: 'upstream', proxy: this.deps.upstream };
  }
}
