import { z } from 'zod';

/** Shared pieces of the request schemas. */

export const idParam = (name: string, prefix: string) =>
  z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9_-]{1,120}$`), `must be a ${prefix}_… id`).describe(name);

export { MetadataPatchSchema, MetadataSchema } from '@berth/contracts';

const queryBool = z.enum(['true', 'false']).transform((v) => v === 'true');

// Single-valued query fields reject a repeated key (an array) rather than silently picking one.
export const QueryInt = (min: number, max: number) =>
  z.string().regex(/^\d{1,12}$/, 'must be an integer').transform(Number).pipe(z.number().int().min(min).max(max));
export const QueryBool = queryBool;
export const QueryString = (max = 256) => z.string().max(max);
export const QueryTime = z.iso.datetime({ offset: true });
export const QueryOrder = z.enum(['asc', 'desc']);
/** `statuses[]=…` or `statuses=…`. */
export const QueryArray = <S extends z.ZodType>(item: S) =>
  z.preprocess((v) => (v === undefined || Array.isArray(v) ? v : [v]), z.array(item).max(100));

export const PageQueryShape = {
  limit: QueryInt(1, 100).optional(),
  page: QueryString(2048).optional(),
};

export const DEFAULT_PAGE_LIMIT = 20;

export const IdempotencyHeaders = z.object({
  'idempotency-key': z.string().min(1).max(256).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII').optional(),
});
