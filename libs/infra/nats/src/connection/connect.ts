import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';

export type NatsConnectionOptions = Readonly<{
  url: string;
  /** Shows in the server's connection list (`session-kernel`, `gateway`, …). */
  name: string;
  /** Base wait between reconnect attempts; a random jitter up to half of it is added. */
  reconnectWaitMs?: number;
}>;

/**
 * A connection that never gives up: services outlive broker restarts, so reconnects are unlimited
 * and jittered (many clients reconnecting at once must not arrive in lockstep). The first connect
 * also waits for the broker, so start order between services and NATS does not matter.
 */
export function connectNats(options: NatsConnectionOptions): Promise<NatsConnection> {
  const wait = options.reconnectWaitMs ?? 500;
  return connect({
    servers: options.url,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: wait,
    reconnectJitter: Math.round(wait / 2),
    waitOnFirstConnect: true,
  });
}
