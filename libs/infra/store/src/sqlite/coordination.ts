import type { Lease, Leases, SandboxClaims } from '@berth/ports';
import type { SqliteDb } from './sqlite-db';

export class SqliteSandboxClaims implements SandboxClaims {
  constructor(private readonly db: SqliteDb) {}

  async claim(sandboxId: string, claimant: string, at: string): Promise<boolean> {
    return this.db.write(() => {
      this.db.stmt('INSERT INTO sandbox_claims (sandbox_id, claimant, claimed_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING').run(sandboxId, claimant, at);
      return this.read(sandboxId) === claimant;
    });
  }

  async claimant(sandboxId: string): Promise<string | null> {
    return this.read(sandboxId);
  }

  async release(sandboxId: string): Promise<void> {
    this.db.write(() => this.db.stmt('DELETE FROM sandbox_claims WHERE sandbox_id = ?').run(sandboxId));
  }

  private read(sandboxId: string): string | null {
    const row = this.db.stmt('SELECT claimant FROM sandbox_claims WHERE sandbox_id = ?').get(sandboxId) as { claimant: string } | undefined;
    return row?.claimant ?? null;
  }
}

type LeaseRow = { name: string; holder: string | null; epoch: number; expires_at: number };

/** Expiry is stored as epoch milliseconds, so "expired at now" is one integer comparison. */
export class SqliteLeases implements Leases {
  constructor(private readonly db: SqliteDb) {}

  async acquire(name: string, holder: string, now: Date, ttlMs: number): Promise<Lease | null> {
    return this.db.write(() => {
      const row = this.read(name);
      const expiresAt = now.getTime() + ttlMs;
      if (row === null) {
        this.db.stmt('INSERT INTO leases (name, holder, epoch, expires_at) VALUES (?, ?, 1, ?)').run(name, holder, expiresAt);
        return leaseOf({ name, holder, epoch: 1, expires_at: expiresAt });
      }
      if (row.holder === holder && row.expires_at > now.getTime()) {
        this.db.stmt('UPDATE leases SET expires_at = ? WHERE name = ?').run(expiresAt, name);
        return leaseOf({ ...row, expires_at: expiresAt });
      }
      if (row.holder !== null && row.expires_at > now.getTime()) return null;
      this.db.stmt('UPDATE leases SET holder = ?, epoch = epoch + 1, expires_at = ? WHERE name = ?').run(holder, expiresAt, name);
      return leaseOf({ name, holder, epoch: row.epoch + 1, expires_at: expiresAt });
    });
  }

  async get(name: string): Promise<Lease | null> {
    const row = this.read(name);
    return row === null || row.holder === null ? null : leaseOf(row);
  }

  async release(name: string, holder: string): Promise<void> {
    this.db.write(() => this.db.stmt('UPDATE leases SET holder = NULL WHERE name = ? AND holder = ?').run(name, holder));
  }

  private read(name: string): LeaseRow | null {
    return (this.db.stmt('SELECT name, holder, epoch, expires_at FROM leases WHERE name = ?').get(name) as LeaseRow | undefined) ?? null;
  }
}

const leaseOf = (row: LeaseRow): Lease => ({ name: row.name, holder: row.holder ?? '', epoch: row.epoch, expires_at: new Date(row.expires_at).toISOString() });
