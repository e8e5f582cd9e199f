import { PermissionViolationError, type NatsConnection } from '@nats-io/nats-core';

/** What nats.js throws (itself, or as the cause of a request error) when the server refused a subject. */
export const isPermissionViolation = (e: unknown): boolean =>
  e instanceof PermissionViolationError || (e instanceof Error && e.cause instanceof PermissionViolationError);

/** Runs `attempt`: true when the server refused it as a permission violation, false when it went through. */
export async function refused(attempt: () => Promise<unknown>): Promise<boolean> {
  try {
    await attempt();
    return false;
  } catch (e) {
    if (isPermissionViolation(e)) return true;
    throw e;
  }
}

/** True when the server refuses this user a subscription: it answers the SUB with -ERR ahead of the flush's PONG. */
export async function refusedSubscription(nc: NatsConnection, subject: string): Promise<boolean> {
  const sub = nc.subscribe(subject);
  await nc.flush();
  const closed = sub.isClosed();
  sub.unsubscribe();
  return closed;
}
