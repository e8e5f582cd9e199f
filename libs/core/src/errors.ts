/**
 * Coded errors: the one vocabulary every layer uses for a refusal. The gateway maps `status` to the
 * HTTP status and `code` to the stable error code clients can switch on.
 */
export const ErrorCodes = {
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  NOT_FOUND: 'NOT_FOUND',
  SESSION_BUSY: 'SESSION_BUSY',
  AGENT_RUNTIME_ERROR: 'AGENT_RUNTIME_ERROR',
  IDEMPOTENCY_KEY_CONFLICT: 'IDEMPOTENCY_KEY_CONFLICT',
  ILLEGAL_STATE: 'ILLEGAL_STATE',
  VERSION_CONFLICT: 'VERSION_CONFLICT',
  CONCURRENCY_CONFLICT: 'CONCURRENCY_CONFLICT',
  UNAUTHENTICATED: 'UNAUTHENTICATED',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  TIMEOUT: 'TIMEOUT',
  UNAVAILABLE: 'UNAVAILABLE',
  /** A dependency did not answer at all (down, restarting, gone from the network): worth waiting for, unlike a refusal. */
  UNREACHABLE: 'UNREACHABLE',
} as const;
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes] | (string & {});

export class BerthError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly status: number,
    message: string,
    readonly details: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }

  toJSON(): { code: ErrorCode; status: number; message: string; details: Readonly<Record<string, unknown>> } {
    return { code: this.code, status: this.status, message: this.message, details: this.details };
  }
}

/** Bad input; `field` names the offending field (dotted path) when there is one. */
export class ValidationError extends BerthError {
  constructor(message: string, readonly field?: string) {
    super(ErrorCodes.VALIDATION_ERROR, 400, message, field ? { field } : {});
  }
}

export class NotFoundError extends BerthError {
  constructor(message: string, code: ErrorCode = ErrorCodes.NOT_FOUND) {
    super(code, 404, message);
  }
}

/** The command is well formed but the aggregate's state forbids it now. */
export class IllegalStateError extends BerthError {
  constructor(code: ErrorCode, message: string, details: Readonly<Record<string, unknown>> = {}) {
    super(code, 409, message, details);
  }
}

/** A lost optimistic-concurrency race: retrying with fresh state is the right reaction. */
export class ConcurrencyError extends BerthError {
  constructor(message: string) {
    super(ErrorCodes.CONCURRENCY_CONFLICT, 409, message);
  }
}

export const isBerthError = (e: unknown): e is BerthError => e instanceof BerthError;

/** Rebuilds a coded error that crossed a process boundary as JSON. */
export const berthErrorFrom = (json: { code: string; status: number; message: string; details?: Record<string, unknown> }): BerthError =>
  new BerthError(json.code, json.status, json.message, json.details ?? {});

/** A Node system error (or any error object) with this `code` (`ENOENT`, `EEXIST`, …). */
export const isCode = (error: unknown, code: string): boolean => typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;

/** Node's codes for a connection that found no one to answer (as opposed to an answer that said no). */
const NO_ANSWER_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** The error is a connection that found no one to answer: a refused or reset connection, or a unix socket that is not there. */
export function isNoAnswer(error: unknown): boolean {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  if (code === 'ENOENT') return syscall === 'connect';
  return typeof code === 'string' && NO_ANSWER_CODES.has(code);
}

/** A dependency did not answer: a coded UNREACHABLE, or such a connection error not (yet) coded by an adapter. */
export const isUnreachable = (error: unknown): boolean => (isBerthError(error) ? error.code === ErrorCodes.UNREACHABLE : isNoAnswer(error));

/** How an adapter codes a failed call: UNREACHABLE when nothing answered (no status and a no-answer error), else UNAVAILABLE. */
export const failedCallCode = (error: unknown, answeredStatus: number | null): ErrorCode =>
  answeredStatus === null && isNoAnswer(error) ? ErrorCodes.UNREACHABLE : ErrorCodes.UNAVAILABLE;
