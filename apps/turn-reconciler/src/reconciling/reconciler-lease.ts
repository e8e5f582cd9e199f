import type { Clock } from '@berth/core';
import type { Lease, Leases } from '@berth/ports';

/** The lease every turn-reconciler replica competes for: one of them reconciles at a time. */
export const RECONCILER_LEASE = 'turn-reconciler';

/**
 * Active/standby among turn-reconciler replicas, fenced by a lease in the store. Two active
 * reconcilers would probe, reattach and recover the same turns twice, so a replica waits as a
 * standby (consuming nothing) until it holds the lease, renews it every third of its TTL, and stops
 * acting the moment it cannot be sure it still holds it: `holds()` is false once the last renewal's
 * expiry has passed by this process's clock, so a paused or partitioned replica sends nothing after
 * its lease could have changed hands. Losing the lease outright (another replica took it) calls
 * `onLost`. Each change of holder increments the lease's epoch, which the logs carry.
 */
export class ReconcilerLease {
  private held: Lease | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: Readonly<{ leases: Leases; holder: string; clock: Clock; ttlMs: number }>,
  ) {}

  /** Polls until this replica holds the lease; resolves with it. `onStandby` runs once if another replica holds it first. */
  async acquire(onStandby: () => void = () => undefined): Promise<Lease> {
    for (let first = true; ; first = false) {
      const lease = await this.deps.leases.acquire(RECONCILER_LEASE, this.deps.holder, this.deps.clock.now(), this.deps.ttlMs);
      if (lease !== null) return (this.held = lease);
      if (first) onStandby();
      await new Promise((r) => setTimeout(r, this.deps.ttlMs / 3));
    }
  }

  /** Renews every third of the TTL; `onLost` once another replica holds it. */
  keep(onLost: (why: string) => void): void {
    this.timer ??= setInterval(() => void this.renew(onLost), this.deps.ttlMs / 3);
    this.timer.unref();
  }

  /** True while the last renewal has not expired (the fence checked before every command and effect). */
  holds(): boolean {
    return this.held !== null && Date.parse(this.held.expires_at) > this.deps.clock.now().getTime();
  }

  epoch(): number | null {
    return this.held?.epoch ?? null;
  }

  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.held !== null) await this.deps.leases.release(RECONCILER_LEASE, this.deps.holder);
    this.held = null;
  }

  private async renew(onLost: (why: string) => void): Promise<void> {
    let lease: Lease | null;
    try {
      lease = await this.deps.leases.acquire(RECONCILER_LEASE, this.deps.holder, this.deps.clock.now(), this.deps.ttlMs);
    } catch {
      // The store is down: keep acting only until the current lease expires (`holds`).
      return;
    }
    if (lease === null) {
      this.held = null;
      if (this.timer) clearInterval(this.timer);
      this.timer = null;
      onLost('another turn-reconciler holds the lease');
      return;
    }
    // Taken again after it lapsed (a store outage): nothing was sent meanwhile (`holds`), and every sweep reads the journal.
    this.held = lease;
  }
}
