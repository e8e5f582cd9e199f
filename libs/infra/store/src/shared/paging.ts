import { ValidationError } from '@berth/core';
import type { Page } from '@berth/ports';

/**
 * Opaque page cursors: base64url of the sort key of the last row served, plus the list and order
 * it belongs to, so a cursor replayed on another list or with another `order` is refused instead
 * of silently serving the wrong rows.
 */
export type Order = 'asc' | 'desc';
export type SortKey = readonly (string | number)[];

type CursorBody = { l: string; o: Order; k: SortKey };

export const encodeCursor = (list: string, order: Order, key: SortKey): string =>
  Buffer.from(JSON.stringify({ l: list, o: order, k: key } satisfies CursorBody)).toString('base64url');

/** The sort key to continue after, or null for the first page. */
export function decodeCursor(list: string, order: Order, page: string | null | undefined): SortKey | null {
  if (page === undefined || page === null || page === '') return null;
  let body: Partial<CursorBody> | null = null;
  try {
    body = JSON.parse(Buffer.from(page, 'base64url').toString('utf8')) as Partial<CursorBody>;
  } catch {
    body = null;
  }
  if (!body || typeof body !== 'object' || body.l !== list || !Array.isArray(body.k)) {
    throw new ValidationError('page is not a valid cursor for this list', 'page');
  }
  if (body.o !== order) {
    throw new ValidationError(`page cursor was issued for order=${String(body.o)}, not order=${order}`, 'page');
  }
  return body.k;
}

export const orderOf = (order: Order | undefined): Order => {
  if (order === undefined) return 'desc';
  if (order !== 'asc' && order !== 'desc') throw new ValidationError("order must be 'asc' or 'desc'", 'order');
  return order;
};

export function checkLimit(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) throw new ValidationError('limit must be a positive integer', 'limit');
  return limit;
}

/** Builds a page from up to `limit + 1` rows fetched in order: the extra row only says "there is more". */
export function pageOf<T>(list: string, order: Order, limit: number, rows: readonly T[], keyOf: (row: T) => SortKey): Page<T> {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  return { data, next_page: rows.length > limit && last !== undefined ? encodeCursor(list, order, keyOf(last)) : null };
}
