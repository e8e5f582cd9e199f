/** How deliveries are retried, how long they are tried, and when an endpoint is given up on. Tests shorten the times. */
export type DeliveryPolicy = Readonly<{
  /**
   * The wait after the n-th failure, for a delivery's own retries and for a failing endpoint's
   * probes alike; the last one repeats.
   */
  retryDelaysMs: readonly number[];
  /** ± this share of each delay, the same for a given delivery (or endpoint) and failure (spreads retries). */
  jitter: number;
  /** A delivery not delivered this long after it was planned is failed: it stays in the log and can be redelivered. */
  maxAgeMs: number;
  /** An endpoint every attempt to which failed for this long is disabled (its deliveries keep waiting until they expire). */
  disableAfterMs: number;
  /** Attempts kept in a delivery's log (the newest). */
  attemptsKept: number;
}>;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * Retries after 5 s, 30 s, 2 min, 10 min, 30 min, then hourly, for 3 days from the event; an
 * endpoint failing for 5 days is disabled. A receiver back within 3 days gets every event.
 */
export const defaultDeliveryPolicy: DeliveryPolicy = {
  retryDelaysMs: [5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR],
  jitter: 0.1,
  maxAgeMs: 3 * DAY,
  disableAfterMs: 5 * DAY,
  attemptsKept: 20,
};
