import { holdsPlace, type HostLoad, placeSandbox, placeSandboxes } from './placement';

const host = (name: string, sandboxes: number, maxSandboxes: number, reachable = true): HostLoad => ({ name, sandboxes, maxSandboxes, reachable });

describe('sandbox placement', () => {
  it('places on the host with the most free places, not the emptiest one', () => {
    // a: 3 free of 4; b: 5 free of 10 (more sandboxes, more room).
    expect(placeSandbox([host('a', 1, 4), host('b', 5, 10)])).toEqual({ kind: 'placed', host: 'b' });
    expect(placeSandbox([host('a', 0, 4), host('b', 8, 10)])).toEqual({ kind: 'placed', host: 'a' });
  });

  it('breaks a tie by the order the hosts are configured in', () => {
    expect(placeSandbox([host('a', 1, 3), host('b', 1, 3)])).toEqual({ kind: 'placed', host: 'a' });
    expect(placeSandbox([host('b', 1, 3), host('a', 1, 3)])).toEqual({ kind: 'placed', host: 'b' });
  });

  it('never exceeds a host limit, and names every load when all are full', () => {
    expect(placeSandbox([host('a', 2, 2), host('b', 0, 1)])).toEqual({ kind: 'placed', host: 'b' });
    expect(placeSandbox([host('a', 2, 2), host('b', 1, 1)])).toEqual({ kind: 'full', message: 'every sandbox host is at its limit (a 2/2, b 1/1)' });
  });

  it('skips a host that does not answer, and says when none does', () => {
    expect(placeSandbox([host('a', 0, 10, false), host('b', 3, 4)])).toEqual({ kind: 'placed', host: 'b' });
    expect(placeSandbox([host('a', 0, 10, false), host('b', 4, 4)])).toEqual({ kind: 'full', message: 'every sandbox host is at its limit (b 4/4); 1 host(s) do not answer' });
    expect(placeSandbox([host('a', 0, 10, false)])).toEqual({ kind: 'full', message: 'no sandbox host answers (a)' });
    expect(placeSandbox([])).toEqual({ kind: 'full', message: 'no sandbox host answers (none configured)' });
  });

  it('counts a container against its host from its creation until it stops: created, running; not once it ran and stopped', () => {
    expect(holdsPlace({ running: false, startedAt: null })).toBe(true);
    expect(holdsPlace({ running: true, startedAt: '2026-12-02T10:00:00.000Z' })).toBe(true);
    expect(holdsPlace({ running: false, startedAt: '2026-12-02T10:00:00.000Z' })).toBe(false);
  });

  it('places several at once one after the other, each counted where it went, until every host is full', () => {
    expect(placeSandboxes([host('a', 1, 3), host('b', 0, 1)], 4)).toEqual([
      { kind: 'placed', host: 'a' },
      { kind: 'placed', host: 'a' },
      { kind: 'placed', host: 'b' },
      { kind: 'full', message: 'every sandbox host is at its limit (a 3/3, b 1/1)' },
    ]);
    expect(placeSandboxes([host('a', 0, 2)], 0)).toEqual([]);
  });
});
