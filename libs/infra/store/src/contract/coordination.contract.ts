import type { BerthStore } from '@berth/ports';
import { at } from './fixtures';

const T0 = new Date('2026-12-02T04:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

export function coordinationContract(store: () => BerthStore): void {
  describe('sandbox claims', () => {
    it('gives one warm sandbox to exactly one of many racing claimants', async () => {
      const { sandboxClaims } = store();
      const sessions = Array.from({ length: 12 }, (_, i) => `sesn_${i}`);
      const won = await Promise.all(sessions.map((s) => sandboxClaims.claim('c0ffee', s, at(1))));
      expect(won.filter(Boolean)).toHaveLength(1);
      const winner = sessions[won.indexOf(true)];
      expect(await sandboxClaims.claimant('c0ffee')).toBe(winner);
      expect(await sandboxClaims.claim('c0ffee', winner as string, at(2))).toBe(true);
      expect(await sandboxClaims.claim('c0ffee', 'sesn_late', at(2))).toBe(false);
      expect(await sandboxClaims.claim('beef', 'sesn_late', at(2))).toBe(true);
    });

    it('frees a released sandbox for the next claimant, and releasing twice is fine', async () => {
      const { sandboxClaims } = store();
      expect(await sandboxClaims.claimant('c0ffee')).toBeNull();
      expect(await sandboxClaims.claim('c0ffee', 'sesn_a', at(1))).toBe(true);
      await sandboxClaims.release('c0ffee');
      await sandboxClaims.release('c0ffee');
      expect(await sandboxClaims.claimant('c0ffee')).toBeNull();
      expect(await sandboxClaims.claim('c0ffee', 'sesn_b', at(2))).toBe(true);
      expect(await sandboxClaims.claimant('c0ffee')).toBe('sesn_b');
    });
  });

  describe('leases', () => {
    it('lets exactly one of many racing holders take a free lease', async () => {
      const { leases } = store();
      const holders = Array.from({ length: 8 }, (_, i) => `manager-${i}`);
      const taken = await Promise.all(holders.map((h) => leases.acquire('sweep', h, T0, 10_000)));
      const winners = taken.filter((l) => l !== null);
      expect(winners).toHaveLength(1);
      expect(winners[0]).toEqual({ name: 'sweep', holder: expect.any(String), epoch: 1, expires_at: later(10_000).toISOString() });
      expect(await leases.get('sweep')).toEqual(winners[0]);
    });

    it('renews for its holder with the same epoch, refuses others until it expires, then changes hands with the next epoch', async () => {
      const { leases } = store();
      expect(await leases.get('sweep')).toBeNull();
      expect(await leases.acquire('sweep', 'a', T0, 1_000)).toMatchObject({ holder: 'a', epoch: 1 });
      expect(await leases.acquire('sweep', 'a', later(500), 1_000)).toEqual({ name: 'sweep', holder: 'a', epoch: 1, expires_at: later(1_500).toISOString() });
      expect(await leases.acquire('sweep', 'b', later(1_499), 1_000)).toBeNull();
      expect(await leases.acquire('sweep', 'b', later(1_500), 1_000)).toEqual({ name: 'sweep', holder: 'b', epoch: 2, expires_at: later(2_500).toISOString() });
      // The old holder, back after its lease expired, is refused: b holds it now.
      expect(await leases.acquire('sweep', 'a', later(1_600), 1_000)).toBeNull();
      expect(await leases.get('sweep')).toMatchObject({ holder: 'b', epoch: 2 });
    });

    it('hands a released lease to the next holder at once, and only its holder can release it', async () => {
      const { leases } = store();
      await leases.acquire('acquire:sesn_1', 'a', T0, 60_000);
      await leases.release('acquire:sesn_1', 'b');
      expect(await leases.acquire('acquire:sesn_1', 'b', later(1), 60_000)).toBeNull();
      await leases.release('acquire:sesn_1', 'a');
      expect(await leases.get('acquire:sesn_1')).toBeNull();
      expect(await leases.acquire('acquire:sesn_1', 'b', later(2), 60_000)).toMatchObject({ holder: 'b', epoch: 2 });
      expect(await leases.acquire('acquire:sesn_2', 'b', later(2), 60_000)).toMatchObject({ holder: 'b', epoch: 1 });
    });
  });
}
