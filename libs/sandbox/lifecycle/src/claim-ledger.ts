/**
 * Who claimed which warm sandbox: an atomic compare-and-set, so no sandbox ever serves two
 * sessions. Docker cannot be the ledger: its rename looks the container up by the old name
 * *before* taking the container lock, so two racing renames of one pool container to two
 * different session names can both succeed (the second renames the first's result).
 */
export interface ClaimLedger {
  /** True for exactly one caller per sandbox id until it is released. */
  tryClaim(sandboxId: string, sessionId: string): Promise<boolean>;
  /** Forget a sandbox (removed, or handed back unused). */
  release(sandboxId: string): Promise<void>;
}

/**
 * The ledger for one sandbox-manager process: the check and the write happen in one synchronous
 * step of the event loop, which is atomic. Several managers sharing one engine need a shared
 * ledger with the same contract (a unique-key insert in the store).
 */
export class InMemoryClaimLedger implements ClaimLedger {
  private readonly claims = new Map<string, string>();

  async tryClaim(sandboxId: string, sessionId: string): Promise<boolean> {
    if (this.claims.has(sandboxId)) return false;
    this.claims.set(sandboxId, sessionId);
    return true;
  }

  async release(sandboxId: string): Promise<void> {
    this.claims.delete(sandboxId);
  }

  claimant(sandboxId: string): string | null {
    return this.claims.get(sandboxId) ?? null;
  }
}
