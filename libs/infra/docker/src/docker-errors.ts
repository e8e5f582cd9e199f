import { BerthError, failedCallCode } from '@berth/core';

/** dockerode rejects with the engine's HTTP status in `statusCode`. */
export const statusOf = (error: unknown): number | null =>
  typeof error === 'object' && error !== null && typeof (error as { statusCode?: unknown }).statusCode === 'number'
    ? (error as { statusCode: number }).statusCode
    : null;

export const isNotFound = (e: unknown): boolean => statusOf(e) === 404;
export const isConflict = (e: unknown): boolean => statusOf(e) === 409;
export const isNotModified = (e: unknown): boolean => statusOf(e) === 304;

/** The engine said no for a reason we do not treat as success, or did not answer at all (UNREACHABLE): a coded, retryable-looking error. */
export function engineError(operation: string, target: string, error: unknown): BerthError {
  const message = error instanceof Error ? error.message : String(error);
  return new BerthError(failedCallCode(error, statusOf(error)), 503, `docker ${operation} ${target} failed: ${message}`, {
    operation,
    target,
    engineStatus: statusOf(error),
  });
}

/** Create answered 404: the image is not on the engine (this engine never pulls on create). */
export function imageMissing(image: string, error: unknown): BerthError {
  const message = error instanceof Error ? error.message : String(error);
  return new BerthError('SANDBOX_IMAGE_MISSING', 503, `image ${image} is not on the Docker engine: build it (scripts/docker/build-images.sh) or pull it (${message})`, {
    image,
  });
}
