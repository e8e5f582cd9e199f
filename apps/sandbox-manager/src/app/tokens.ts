/** How often a long handler (a running turn) tells JetStream it is still working on the delivery. */
export const HEARTBEAT_MS = Symbol('HEARTBEAT_MS');

/** Each consumer's Nest transport: a handler names the one whose deliveries it takes. */
export const TURNS_TRANSPORT = Symbol('sandbox-manager-turns');
export const CONTROL_TRANSPORT = Symbol('sandbox-manager-control');
