import type { z } from 'zod';

type Def = { type: string; innerType?: z.ZodType; shape?: Record<string, z.ZodType>; element?: z.ZodType; options?: z.ZodType[]; discriminator?: string; in?: z.ZodType; values?: unknown[] };
const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);

/**
 * Every field a zod schema accepts, as paths: `a.b`, `list[].field`, `union<literal>.field` for a
 * discriminated union's variants; a string-or-object union lists the bare path and the object's fields.
 */
export function schemaFields(schema: z.ZodType, prefix = ''): string[] {
  const def = defOf(schema);
  if (WRAPPERS.has(def.type) && def.innerType) return schemaFields(def.innerType, prefix);
  if (def.type === 'pipe' && def.in) return schemaFields(def.in, prefix);
  if (def.type === 'object' && def.shape) {
    return Object.entries(def.shape).flatMap(([key, value]) => schemaFields(value, prefix ? `${prefix}.${key}` : key));
  }
  if (def.type === 'array' && def.element) return schemaFields(def.element, `${prefix}[]`);
  if (def.type === 'union' && def.options) {
    const fields = def.options.flatMap((option) => {
      const discriminant = def.discriminator ? defOf(defOf(option).shape?.[def.discriminator] as z.ZodType).values?.[0] : undefined;
      return schemaFields(option, discriminant === undefined ? prefix : `${prefix}<${String(discriminant)}>`);
    });
    return [...new Set(fields)];
  }
  return [prefix];
}
