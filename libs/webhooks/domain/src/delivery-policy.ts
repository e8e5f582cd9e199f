/** How deliveries are retried and when an endpoint is given up on. Tests shorten the delays. */
export type DeliveryPolicy = Readonly<{
  /** Wait before attempt n+2 after attempt n+1 failed; its length + 1 bounds the attempts of one delivery. */
  retryDelaysMs: readonly number[];
  /** ± this share of each delay, the same for a given delivery and attempt (spreads retries of many deliveries). */
  jitter: number;
  /** Failed attempts in a row (any delivery) after which the endpoint is disabled. */
  disableAfterFailures: number;
  /** Attempts kept in a delivery's log (the newest). */
  attemptsKept: number;
}>;

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** 11 attempts over about 31 hours, then the delivery is failed (and can be redelivered by hand). */
export const defaultDeliveryPolicy: DeliveryPolicy = {
  retryDelaysMs: [5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 4 * HOUR, 8 * HOUR, 16 * HOUR],
  jitter: 0.1,
  disableAfterFailures: 20,
  attemptsKept: 20,
};

export const maxAttempts = (policy: DeliveryPolicy): number => policy.retryDelaysMs.length + 1;
