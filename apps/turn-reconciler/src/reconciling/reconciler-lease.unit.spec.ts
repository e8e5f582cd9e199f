import { FixedClock } from '@berth/core/testing';
import { MemoryLeases } from '@berth/testing';
import { RECONCILER_LEASE, ReconcilerLease } from './reconciler-lease';

const TTL = 300;

describe('ReconcilerLease (one active turn-reconciler among replicas)', () => {
  it('keeps a second replica on standby until the first one\'s lease lapses, then hands it over with the next epoch', async () => {
    const leases = new MemoryLeases();
    const clock = new FixedClock();
    const a = new ReconcilerLease({ leases, holder: 'a', clock, ttlMs: TTL });
    const b = new ReconcilerLease({ leases, holder: 'b', clock, ttlMs: TTL });
    expect(await a.acquire()).toMatchObject({ holder: 'a', epoch: 1 });
    expect(a.holds()).toBe(true);

    let standby = 0;
    let taken = false;
    const waiting = b.acquire(() => standby++).then(() => (taken = true));
    await new Promise((r) => setTimeout(r, TTL / 2));
    expect([standby, taken, b.holds()]).toEqual([1, false, false]);

    // a dies (no more renewals); once its lease has expired, b takes over.
    clock.advance(TTL + 1);
    expect(a.holds()).toBe(false);
    await waiting;
    expect(b.holds()).toBe(true);
    expect(b.epoch()).toBe(2);
    expect(await leases.get(RECONCILER_LEASE)).toMatchObject({ holder: 'b', epoch: 2 });
  });

  it('renews while it runs, and reports the lease lost once another replica holds it', async () => {
    const leases = new MemoryLeases();
    const clock = new FixedClock();
    const a = new ReconcilerLease({ leases, holder: 'a', clock, ttlMs: TTL });
    await a.acquire();
    const lost: string[] = [];
    a.keep((why) => lost.push(why));
    clock.advance(TTL / 2);
    await new Promise((r) => setTimeout(r, TTL / 2));
    expect(a.holds()).toBe(true);
    expect(lost).toEqual([]);

    // a was paused past its expiry and b took the lease meanwhile.
    clock.advance(TTL * 2);
    expect(a.holds()).toBe(false);
    expect(await leases.acquire(RECONCILER_LEASE, 'b', clock.now(), TTL)).toMatchObject({ holder: 'b' });
    await new Promise((r) => setTimeout(r, TTL / 2));
    expect(lost).toEqual(['another turn-reconciler holds the lease']);
    expect(a.holds()).toBe(false);
    await a.release();
    expect(await leases.get(RECONCILER_LEASE)).toMatchObject({ holder: 'b' });
  });
});
