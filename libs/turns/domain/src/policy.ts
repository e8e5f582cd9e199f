/**
 * The reconciler's timers. Defaults keep a stalled or orphaned turn's convergence under ~10 s
 * (see docs/recovery.md): a probe is one cheap inspect, so probing a slow-but-healthy turn every
 * few seconds costs little, while failing a turn needs `maxAttempts` unsuccessful steps.
 */
export type ReconcilePolicy = Readonly<{
  /** Silence (no new output) before a running turn is probed; also the re-probe period of a healthy one. */
  probeAfterMs: number;
  /** Wait before retrying after a probe or recovery step failed. */
  retryAfterMs: number;
  /** A requested probe / effect / command with no answer after this long counts as a failed attempt. */
  pendingTimeoutMs: number;
  /** Unsuccessful attempts (without progress in between) before the turn is settled as failed. */
  maxAttempts: number;
  /** A harness that is alive and attached but silent this long is hung: the turn fails with `no_progress`. */
  stallMs: number;
  /** A sandbox requested this recently may still be starting: "missing" is not yet evidence of loss. */
  startupGraceMs: number;
  /**
   * How long the sandbox-manager may leave every question unanswered before the turn fails. Its
   * absence (a restart, a rollout, an overloaded host) is no evidence about the turn, so it burns
   * no attempt; only this bound ends the wait.
   */
  unansweredMs: number;
}>;

export const defaultReconcilePolicy: ReconcilePolicy = {
  probeAfterMs: 5_000,
  retryAfterMs: 1_000,
  pendingTimeoutMs: 5_000,
  maxAttempts: 5,
  stallMs: 10 * 60_000,
  startupGraceMs: 60_000,
  unansweredMs: 10 * 60_000,
};
