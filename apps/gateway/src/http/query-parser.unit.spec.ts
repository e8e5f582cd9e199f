import { parseQueryString } from './query-parser';

describe('query strings as the SDK writes them', () => {
  it('reads bracket arrays, repeated keys and flat bracketed filters', () => {
    expect(parseQueryString('types%5B%5D=agent.message&types%5B%5D=user.message&created_at%5Bgte%5D=2026-01-01T00%3A00%3A00Z&beta=true&limit=5')).toEqual({
      types: ['agent.message', 'user.message'],
      'created_at[gte]': '2026-01-01T00:00:00Z',
      beta: 'true',
      limit: '5',
    });
    expect(parseQueryString('statuses[]=idle')).toEqual({ statuses: ['idle'] });
    expect(parseQueryString('order=asc&order=desc')).toEqual({ order: ['asc', 'desc'] });
  });

  it('never builds nested objects or touches prototypes', () => {
    const parsed = parseQueryString('__proto__%5Bpolluted%5D=1&constructor=x');
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(parsed['__proto__[polluted]']).toBe('1');
  });
});
