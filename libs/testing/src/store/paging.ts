import { ValidationError } from '@berth/core';
import type { Page } from '@berth/ports';

/**
 * The in-memory store's page cursors: base64url of (list, order, sort key), refused on another list
 * or order, like the real adapters'. Kept local so @berth/testing never loads the database drivers.
 */
export type Order = 'asc' | 'desc';
type Key = readonly (string | number)[];

export function pageRows<T>(
  list: string,
  rows: readonly T[],
  query: Readonly<{ limit: number; page?: string | null; order?: Order }>,
  keyOf: (row: T) => Key,
): Page<T> {
  if (!Number.isInteger(query.limit) || query.limit < 1) throw new ValidationError('limit must be a positive integer', 'limit');
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new ValidationError("order must be 'asc' or 'desc'", 'order');
  const after = decode(list, order, query.page);
  const sign = order === 'asc' ? 1 : -1;
  const sorted = [...rows].sort((a, b) => sign * compareKeys(keyOf(a), keyOf(b)));
  const rest = after ? sorted.filter((row) => sign * compareKeys(keyOf(row), after) > 0) : sorted;
  const data = rest.slice(0, query.limit);
  const last = data[data.length - 1];
  const next = rest.length > query.limit && last !== undefined ? Buffer.from(JSON.stringify({ l: list, o: order, k: keyOf(last) })).toString('base64url') : null;
  return { data, next_page: next };
}

function decode(list: string, order: Order, page: string | null | undefined): Key | null {
  if (page === undefined || page === null || page === '') return null;
  let body: { l?: unknown; o?: unknown; k?: unknown } | null;
  try {
    body = JSON.parse(Buffer.from(page, 'base64url').toString('utf8')) as typeof body;
  } catch {
    body = null;
  }
  if (!body || body.l !== list || !Array.isArray(body.k)) throw new ValidationError('page is not a valid cursor for this list', 'page');
  if (body.o !== order) throw new ValidationError(`page cursor was issued for order=${String(body.o)}, not order=${order}`, 'page');
  return body.k as Key;
}

function compareKeys(a: Key, b: Key): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}
