import { HttpException } from '@nestjs/common';
import { ErrorCodes, isBerthError } from '@berth/core';
import { isStoreUnavailable } from '@berth/store';

/** Anthropic-style error body, plus Berth's stable `code` for clients to switch on. */
export type ErrorBody = Readonly<{
  type: 'error';
  error: Readonly<{ type: string; message: string; code: string; details?: Readonly<Record<string, unknown>> }>;
}>;

export type RenderedError = Readonly<{ status: number; body: ErrorBody }>;

const ERROR_TYPES: Readonly<Record<number, string>> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  409: 'conflict_error',
  413: 'request_too_large',
  415: 'invalid_request_error',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

const CODES_BY_STATUS: Readonly<Record<number, string>> = {
  400: ErrorCodes.VALIDATION_ERROR,
  401: ErrorCodes.UNAUTHENTICATED,
  404: ErrorCodes.NOT_FOUND,
  413: ErrorCodes.PAYLOAD_TOO_LARGE,
  415: 'UNSUPPORTED_MEDIA_TYPE',
  503: ErrorCodes.UNAVAILABLE,
  504: ErrorCodes.TIMEOUT,
};

export const errorBody = (status: number, code: string, message: string, details?: Readonly<Record<string, unknown>>): RenderedError => ({
  status,
  body: {
    type: 'error',
    error: {
      type: ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error'),
      message,
      code,
      ...(details && Object.keys(details).length > 0 ? { details } : {}),
    },
  },
});

/**
 * Errors body-parser raises: http-errors with a 4xx `status`, usually with a `type` such as
 * `entity.parse.failed` (a broken gzip body comes through as a bare zlib error with status 400).
 */
type ParserError = { type?: unknown; status?: unknown };
const isParserError = (e: unknown): e is ParserError & { status: number } =>
  typeof e === 'object' && e !== null && typeof (e as ParserError).status === 'number';

const PARSER_MESSAGES: Readonly<Record<string, string>> = {
  'entity.parse.failed': 'request body is not valid JSON',
  'entity.too.large': 'request body is too large',
  'encoding.unsupported': 'unsupported content encoding',
  'charset.unsupported': 'unsupported charset',
  'request.aborted': 'request aborted',
  'request.size.invalid': 'request size did not match content length',
  'entity.verify.failed': 'request body rejected',
};

/**
 * Every failure becomes one of these. A store that cannot take the request now is a 503 the client
 * may retry; coded errors keep their status and code; framework and body-parser errors get a
 * readable message; anything unexpected is a 500 with a generic message (the caller logs the
 * cause, the client never sees a stack).
 */
export function renderError(error: unknown): RenderedError & { unexpected: boolean; storeUnavailable?: boolean } {
  // The store locked, full or unreachable: nothing is wrong with the request, it can be retried.
  if (isStoreUnavailable(error)) return { ...errorBody(503, ErrorCodes.UNAVAILABLE, 'the store is unavailable right now; retry the request'), unexpected: false, storeUnavailable: true };
  if (isBerthError(error)) {
    const details = Object.fromEntries(Object.entries(error.details).filter(([k]) => k !== 'stack'));
    return { ...errorBody(error.status, error.code, error.message, details), unexpected: false };
  }
  if (error instanceof HttpException) {
    const status = error.getStatus();
    const message = status === 404 ? 'no such route' : error.message;
    return { ...errorBody(status, CODES_BY_STATUS[status] ?? `HTTP_${status}`, message), unexpected: status >= 500 };
  }
  if (isParserError(error) && error.status >= 400 && error.status < 500) {
    const code = error.status === 413 ? ErrorCodes.PAYLOAD_TOO_LARGE : error.status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'INVALID_BODY';
    const message = typeof error.type === 'string' ? PARSER_MESSAGES[error.type] : undefined;
    return { ...errorBody(error.status, code, message ?? 'request body rejected'), unexpected: false };
  }
  return { ...errorBody(500, 'INTERNAL', 'internal server error'), unexpected: true };
}
