/**
 * What replicas of one service agree on through the store, since they share nothing else: who
 * claimed a warm sandbox, and who holds a role (a sweep, a session's sandbox acquisition) right
 * now. Both are compare-and-set writes in one statement, so two processes never both win.
 */

/** Which session claimed which warm sandbox: one claimant per sandbox, across every sandbox-manager. */
export interface SandboxClaims {
  /**
   * Records `claimant` as the sandbox's claimant unless another claimant holds it. True when
   * `claimant` holds it now (claiming again is a no-op that answers true), false when another does.
   */
  claim(sandboxId: string, claimant: string, at: string): Promise<boolean>;
  /** The sandbox's claimant, null when unclaimed. */
  claimant(sandboxId: string): Promise<string | null>;
  /** Forgets the sandbox's claim (it was removed, or handed back unused); missing is fine. */
  release(sandboxId: string): Promise<void>;
}

/**
 * A named lease: at most one holder until it expires. Each time the lease changes hands its epoch
 * grows, so a holder that lost it (paused past its expiry, partitioned) can tell: its epoch is no
 * longer the lease's.
 */
export type Lease = Readonly<{ name: string; holder: string; epoch: number; expires_at: string }>;

export interface Leases {
  /**
   * Takes lease `name` for `holder` until `now + ttlMs` when it is free, expired or already
   * `holder`'s (a renewal keeps the epoch; a takeover increments it). Null when another holder's
   * lease has not expired at `now`.
   */
  acquire(name: string, holder: string, now: Date, ttlMs: number): Promise<Lease | null>;
  /** The lease as stored (expired or not); null when it was never taken or was released. */
  get(name: string): Promise<Lease | null>;
  /** Gives the lease up if `holder` holds it (its epoch stays, the next holder's is one more). */
  release(name: string, holder: string): Promise<void>;
}

/**
 * Work done while holding the named lease, waiting while another holder has it; the lease is
 * renewed while the work runs and lapses by itself when its holder dies (`LeaseLock` in
 * `@berth/sandbox-lifecycle`, on `Leases`).
 */
export interface LeaseRunner {
  run<T>(name: string, work: () => Promise<T>): Promise<T>;
}
