/** Parses an ISO-8601 timestamp; an offset-less one is read as UTC. Returns null when unparseable. */
export function parseIsoUtc(value: unknown): Date | null {
  if (typeof value !== 'string' || value.trim() === '') return null;
  const text = value.trim();
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(text)) return null;
  const hasOffset = /(Z|[+-]\d{2}:?\d{2})$/i.test(text) && text.length > 10;
  const date = new Date(hasOffset ? text : `${text.replace(' ', 'T')}${text.length > 10 ? 'Z' : 'T00:00:00Z'}`);
  return Number.isNaN(date.getTime()) ? null : date;
}
