/**
 * Every command and event travels as one NATS message, and nats-server refuses a message above its
 * `max_payload` (1 MiB by default). These bounds keep each one under it with room for the envelope:
 * the gateway refuses a larger user message, the sandbox-manager truncates a larger agent output
 * (with a marker saying so) and splits output batches, so nothing is lost or retried forever.
 */
export const PayloadLimits = {
  /** One user.message's `content`, as JSON. */
  userMessageBytes: 512 * 1024,
  /** One agent output (a tool result, a message, a tool input), as JSON, before it is truncated. */
  agentOutputBytes: 256 * 1024,
  /** One command on the bus: a RecordAgentOutput batch is split to stay under it. */
  commandBytes: 768 * 1024,
} as const;

export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8');
