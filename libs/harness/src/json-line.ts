/** A JSON object from one stdout line, or null for blank lines, non-JSON noise and non-objects. */
export type JsonObject = Readonly<Record<string, unknown>>;

export function parseJsonLine(line: string): JsonObject | null {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : null;
  } catch {
    return null;
  }
}

export const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
export const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? Math.max(0, Math.round(value)) : 0);
export const obj = (value: unknown): JsonObject => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as JsonObject) : {});
export const arr = (value: unknown): readonly unknown[] => (Array.isArray(value) ? value : []);

/** Tool result content as Managed Agents blocks: strings become one text block. */
export function contentBlocks(value: unknown): Record<string, unknown>[] {
  if (typeof value === 'string') return [{ type: 'text', text: value }];
  return arr(value).map((block) => (typeof block === 'string' ? { type: 'text', text: block } : { ...obj(block) }));
}

export const textContent = (text: string) => [{ type: 'text' as const, text }];
