import type { BerthStore } from '@berth/ports';
import { at, batch } from './fixtures';

export function snapshotsContract(store: () => BerthStore): void {
  describe('snapshots', () => {
    it('saves only over the version the writer expects', async () => {
      const { snapshots } = store();
      expect(await snapshots.load('sesn_1')).toBeNull();

      expect(await snapshots.save({ sessionId: 'sesn_1', version: 2, state: { status: 'idle', turns: [] }, updatedAt: at(2) }, 0)).toBe(true);
      expect(await snapshots.save({ sessionId: 'sesn_1', version: 3, state: { status: 'other writer' }, updatedAt: at(3) }, 0)).toBe(false);
      expect(await snapshots.save({ sessionId: 'sesn_1', version: 5, state: { status: 'running', turns: ['turn_1'] }, updatedAt: at(5) }, 2)).toBe(true);
      expect(await snapshots.save({ sessionId: 'sesn_1', version: 4, state: { status: 'stale' }, updatedAt: at(4) }, 2)).toBe(false);

      expect(await snapshots.load('sesn_1')).toEqual({ sessionId: 'sesn_1', version: 5, state: { status: 'running', turns: ['turn_1'] }, updatedAt: at(5) });
      expect(await snapshots.load('sesn_2')).toBeNull();
    });

    it('may lag the journal; the tail after its version is what catches it up', async () => {
      const { snapshots, journal } = store();
      await journal.appendEvents('sesn_1', batch('sesn_1', 1, 3));
      await snapshots.save({ sessionId: 'sesn_1', version: 3, state: { folded: 3 }, updatedAt: at(3) }, 0);
      await journal.appendEvents('sesn_1', batch('sesn_1', 4, 5));

      const snapshot = await snapshots.load('sesn_1');
      expect(snapshot?.version).toBe(3);
      expect((await journal.readEvents('sesn_1', { afterSeq: snapshot?.version ?? 0 })).map((e) => e.seq)).toEqual([4, 5]);
    });
  });
}
