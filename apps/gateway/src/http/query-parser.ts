/**
 * Query strings as the SDK writes them (`types[]=a&types[]=b`, `created_at[gte]=…`): a repeated
 * key or one ending in `[]` becomes an array; bracketed keys stay flat. No nested objects, so no
 * prototype tricks through `__proto__[x]=`.
 */
export function parseQueryString(search: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const [rawKey, value] of new URLSearchParams(search)) {
    const isArray = rawKey.endsWith('[]');
    const key = isArray ? rawKey.slice(0, -2) : rawKey;
    const existing = out[key];
    if (existing === undefined) out[key] = isArray ? [value] : value;
    else out[key] = Array.isArray(existing) ? [...existing, value] : [existing, value];
  }
  return { ...out };
}
