import type { EventData, RecordedEvent } from '@berth/contracts';

/** What `POST …/recover` reports under `berth.recover`. */
export type RecoverResult = Readonly<{
  outcome: EventData<'SessionRecovered'>['outcome'];
  reason: EventData<'SessionRecovered'>['reason'];
  /** A sandbox start was already under way: the kernel appended nothing for this recover. */
  already_requested: boolean;
}>;

/**
 * The kernel's decision, read from the events the recover command appended. None means the
 * kernel found a start already requested (its only no-op): the session comes back READY from it,
 * `recreated` when it is still TERMINATED, `startup-requested` otherwise.
 */
export function recoverResult(appended: readonly RecordedEvent[], lifecycle: unknown): RecoverResult {
  for (const event of appended) {
    if (event.type === 'SessionRecovered') return { outcome: event.data.outcome, reason: event.data.reason, already_requested: false };
  }
  return { outcome: lifecycle === 'TERMINATED' ? 'recreated' : 'startup-requested', reason: null, already_requested: true };
}
