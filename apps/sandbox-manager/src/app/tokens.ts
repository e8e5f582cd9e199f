/** How often a long handler (a running turn) tells JetStream it is still working on the delivery. */
export const HEARTBEAT_MS = Symbol('HEARTBEAT_MS');

