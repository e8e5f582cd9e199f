import { decodeCursor, type Order } from '../shared/paging';

/**
 * Keyset pagination over (created_at, id): the WHERE fragment continuing after a cursor and the
 * ORDER BY that goes with it. Row-value comparison keeps it one index range scan. `table` qualifies
 * the columns in a join.
 */
export function keysetPage(
  list: string,
  order: Order,
  page: string | null | undefined,
  table = '',
): { where: string[]; params: unknown[]; orderBy: string } {
  const after = decodeCursor(list, order, page);
  const [createdAt, id] = table ? [`${table}.created_at`, `${table}.id`] : ['created_at', 'id'];
  const dir = order === 'asc' ? 'ASC' : 'DESC';
  const orderBy = `ORDER BY ${createdAt} ${dir}, ${id} ${dir}`;
  if (!after) return { where: [], params: [], orderBy };
  return { where: [`(${createdAt}, ${id}) ${order === 'asc' ? '>' : '<'} (?, ?)`], params: [after[0], after[1]], orderBy };
}
