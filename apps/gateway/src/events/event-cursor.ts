import { ValidationError } from '@berth/core';

/** An opaque page cursor over a session's journal: the last seq returned and the order it was made for. */
export type EventCursor = Readonly<{ seq: number; order: 'asc' | 'desc' }>;

export const encodeEventCursor = (cursor: EventCursor): string => Buffer.from(JSON.stringify({ s: cursor.seq, o: cursor.order })).toString('base64url');

export function decodeEventCursor(page: string, order: 'asc' | 'desc'): EventCursor {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(page, 'base64url').toString('utf8'));
  } catch {
    throw new ValidationError('page: not a cursor this API returned', 'page');
  }
  const { s, o } = (raw ?? {}) as { s?: unknown; o?: unknown };
  if (typeof s !== 'number' || !Number.isSafeInteger(s) || s < 0 || (o !== 'asc' && o !== 'desc')) throw new ValidationError('page: not a cursor this API returned', 'page');
  if (o !== order) throw new ValidationError(`page: this cursor was made for order=${o}`, 'page');
  return { seq: s, order: o };
}
