import { contentType, extension, lookup } from 'mime-types';

/**
 * How a file's name and media type are derived, the same for an upload (the gateway) and a
 * captured session output (the sandbox-manager).
 */
const GENERIC_TYPES = new Set(['application/octet-stream', 'binary/octet-stream', '']);

/** A specific declared type wins; otherwise the name's extension decides; else octet-stream. */
export function mimeTypeOf(filename: string, declared: string | null | undefined): string {
  const given = (declared ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (!GENERIC_TYPES.has(given) && /^[a-z0-9.+-]+\/[a-z0-9.+-]+$/.test(given)) return given;
  return lookup(filename) || 'application/octet-stream';
}

/**
 * Only the last path component of a given name is kept (either slash); control characters go; an
 * absent or empty name becomes `unnamed` plus the extension of the media type, when known.
 */
export function fileNameOf(raw: string | null | undefined, mimeType: string): string {
  const last = (raw ?? '').split(/[/\\]/).pop() ?? '';
  const clean = last.replace(/[\u0000-\u001f\u007f]/g, '').trim().slice(0, 255);
  if (clean !== '' && clean !== '.' && clean !== '..') return clean;
  const ext = extension(mimeType);
  return ext ? `unnamed.${ext}` : 'unnamed';
}

/** `Content-Type` to serve a file with (a charset for text types). */
export const servedContentType = (mimeType: string): string => contentType(mimeType) || mimeType;
