import { BerthError, failedCallCode } from '@berth/core';

/** The HTTP status of a failed API call, as @kubernetes/client-node reports it. */
export const statusOf = (error: unknown): number | null => {
  const code = (error as { code?: unknown; statusCode?: unknown } | null)?.code ?? (error as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : null;
};

export function apiError(operation: string, target: string, error: unknown): BerthError {
  const message = error instanceof Error ? error.message : String(error);
  return new BerthError(failedCallCode(error, statusOf(error)), 503, `kubernetes ${operation} ${target} failed: ${message}`, { operation, target, apiStatus: statusOf(error) });
}
