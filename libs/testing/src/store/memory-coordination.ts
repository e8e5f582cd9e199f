import type { Lease, Leases, SandboxClaims } from '@berth/ports';

/** Each call checks and writes in one synchronous step of the event loop, which is atomic in one process. */
export class MemorySandboxClaims implements SandboxClaims {
  private readonly claims = new Map<string, string>();

  async claim(sandboxId: string, claimant: string): Promise<boolean> {
    if (!this.claims.has(sandboxId)) this.claims.set(sandboxId, claimant);
    return this.claims.get(sandboxId) === claimant;
  }

  async claimant(sandboxId: string): Promise<string | null> {
    return this.claims.get(sandboxId) ?? null;
  }

  async release(sandboxId: string): Promise<void> {
    this.claims.delete(sandboxId);
  }
}

type Held = { holder: string | null; epoch: number; expiresAt: number };

export class MemoryLeases implements Leases {
  private readonly leases = new Map<string, Held>();

  async acquire(name: string, holder: string, now: Date, ttlMs: number): Promise<Lease | null> {
    const held = this.leases.get(name);
    const at = now.getTime();
    const live = held !== undefined && held.holder !== null && held.expiresAt > at;
    if (live && held.holder !== holder) return null;
    const next: Held = { holder, epoch: live ? held.epoch : (held?.epoch ?? 0) + 1, expiresAt: at + ttlMs };
    this.leases.set(name, next);
    return leaseOf(name, next);
  }

  async get(name: string): Promise<Lease | null> {
    const held = this.leases.get(name);
    return held === undefined || held.holder === null ? null : leaseOf(name, held);
  }

  async release(name: string, holder: string): Promise<void> {
    const held = this.leases.get(name);
    if (held?.holder === holder) this.leases.set(name, { ...held, holder: null });
  }
}

const leaseOf = (name: string, held: Held): Lease => ({ name, holder: held.holder ?? '', epoch: held.epoch, expires_at: new Date(held.expiresAt).toISOString() });
