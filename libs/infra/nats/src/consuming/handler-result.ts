import { ErrorCodes, isBerthError } from '@berth/core';

/** What a message handler decided; the consumer runner turns it into the JetStream reply. */
export type HandlerResult =
  | Readonly<{ type: 'ack' }>
  | Readonly<{ type: 'retry'; delayMs?: number }>
  | Readonly<{ type: 'term'; reason: string }>
  /** Still in progress: extend the ack deadline and leave the message in flight. */
  | Readonly<{ type: 'working' }>;

export const HandlerResults = {
  ack: (): HandlerResult => ({ type: 'ack' }),
  retry: (delayMs?: number): HandlerResult => ({ type: 'retry', delayMs }),
  term: (reason: string): HandlerResult => ({ type: 'term', reason }),
  working: (): HandlerResult => ({ type: 'working' }),
} as const;

export const isHandlerResult = (value: unknown): value is HandlerResult => {
  const type = (value as { type?: unknown } | null)?.type;
  return type === 'ack' || type === 'retry' || type === 'term' || type === 'working';
};

/** How a thrown error is treated: bad input is never retried, anything else may be transient. */
export type ErrorClass = Readonly<{ kind: 'permanent'; reason: string } | { kind: 'transient'; reason: string }>;

const RETRYABLE_CONFLICTS = new Set<string>([ErrorCodes.CONCURRENCY_CONFLICT, ErrorCodes.VERSION_CONFLICT]);

export function classifyError(error: unknown): ErrorClass {
  if (isBerthError(error)) {
    const reason = `${error.code}: ${error.message}`;
    const permanent = error.status >= 400 && error.status < 500 && !RETRYABLE_CONFLICTS.has(error.code);
    return permanent ? { kind: 'permanent', reason } : { kind: 'transient', reason };
  }
  return { kind: 'transient', reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
}

export type RetryPolicy = Readonly<{ baseDelayMs: number; maxDelayMs: number }>;

export const defaultRetryPolicy: RetryPolicy = { baseDelayMs: 500, maxDelayMs: 30_000 };

/** Exponential redelivery delay for a failed attempt (deliveryCount starts at 1). */
export function retryDelayMs(deliveryCount: number, policy: RetryPolicy = defaultRetryPolicy): number {
  const exponent = Math.max(0, deliveryCount - 1);
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.min(exponent, 20));
}
