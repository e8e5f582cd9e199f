import type { Page } from '@berth/ports';
import { checkLimit, decodeCursor, orderOf, pageOf, type Order, type SortKey } from '@berth/store/shared';

/** The in-memory store's pages: the adapters' cursors and ordering, over rows sorted in memory. */
export function pageRows<T>(list: string, rows: readonly T[], query: Readonly<{ limit: number; page?: string | null; order?: Order }>, keyOf: (row: T) => SortKey): Page<T> {
  const limit = checkLimit(query.limit);
  const order = orderOf(query.order);
  const after = decodeCursor(list, order, query.page);
  const sign = order === 'asc' ? 1 : -1;
  const sorted = [...rows].sort((a, b) => sign * compareKeys(keyOf(a), keyOf(b)));
  const rest = after ? sorted.filter((row) => sign * compareKeys(keyOf(row), after) > 0) : sorted;
  return pageOf(list, order, limit, rest.slice(0, limit + 1), keyOf);
}

function compareKeys(a: SortKey, b: SortKey): number {
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
