import type { Filter } from 'mongodb';
import { decodeCursor, type Order } from '../shared/paging';

/** Keyset pagination over (created_at, _id): the filter continuing after a cursor and its sort. */
export function keysetPage<T extends { created_at: string; _id: string }>(
  list: string,
  order: Order,
  page: string | null | undefined,
): { filter: Filter<T>[]; sort: { created_at: 1 | -1; _id: 1 | -1 } } {
  const after = decodeCursor(list, order, page);
  const dir = order === 'asc' ? 1 : -1;
  const sort = { created_at: dir, _id: dir } as const;
  if (!after) return { filter: [], sort };
  const op = order === 'asc' ? '$gt' : '$lt';
  const [createdAt, id] = after;
  return { filter: [{ $or: [{ created_at: { [op]: createdAt } }, { created_at: createdAt, _id: { [op]: id } }] } as Filter<T>], sort };
}
