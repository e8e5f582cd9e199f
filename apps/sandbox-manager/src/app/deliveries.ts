import { parseRecordedEvent, type RecordedEvent } from '@berth/contracts';
import type { JetStreamContext } from '@berth/nest';

/** The event a SESSION_EVT delivery carries, checked against the type its subject routed it by. */
export function eventOf<T extends RecordedEvent['type']>(context: JetStreamContext, ...types: readonly T[]): Extract<RecordedEvent, { type: T }> {
  const event = parseRecordedEvent(context.message.body);
  if (!(types as readonly string[]).includes(event.type)) throw new Error(`expected ${types.join(' or ')} on ${context.message.subject}, got ${event.type}`);
  return event as Extract<RecordedEvent, { type: T }>;
}

/** Keeps the delivery in flight (`working`) while `work` runs: a crash redelivers it, a long one is not. */
export async function whileWorking<T>(context: JetStreamContext, heartbeatMs: number, work: () => Promise<T>): Promise<T> {
  const heartbeat = setInterval(() => context.message.working(), heartbeatMs);
  try {
    return await work();
  } finally {
    clearInterval(heartbeat);
  }
}
