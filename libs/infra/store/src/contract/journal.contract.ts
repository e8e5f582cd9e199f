import { ConcurrencyError, ValidationError } from '@berth/core';
import type { BerthStore } from '@berth/ports';
import { batch, event } from './fixtures';

export function journalContract(store: () => BerthStore): void {
  describe('journal', () => {
    it('appends batches with gap-free seqs per session and reads them back unchanged', async () => {
      const { journal } = store();
      const first = batch('sesn_1', 1, 2);
      const second = batch('sesn_1', 3, 3);
      await journal.appendEvents('sesn_1', first);
      await journal.appendEvents('sesn_1', second);
      await journal.appendEvents('sesn_2', batch('sesn_2', 1, 1));

      expect(await journal.lastSeq('sesn_1')).toBe(3);
      expect(await journal.lastSeq('sesn_2')).toBe(1);
      expect(await journal.lastSeq('sesn_none')).toBe(0);
      expect(await journal.readEvents('sesn_1')).toEqual([...first, ...second]);
    });

    it('refuses a batch that would leave a gap or is not consecutive, writing nothing', async () => {
      const { journal } = store();
      await expect(journal.appendEvents('sesn_1', batch('sesn_1', 2, 3))).rejects.toBeInstanceOf(ValidationError);
      await journal.appendEvents('sesn_1', batch('sesn_1', 1, 1));
      await expect(journal.appendEvents('sesn_1', [event('sesn_1', 2), event('sesn_1', 4)])).rejects.toBeInstanceOf(ValidationError);
      await expect(journal.appendEvents('sesn_1', [event('sesn_other', 2)])).rejects.toBeInstanceOf(ValidationError);
      await expect(journal.appendEvents('sesn_1', batch('sesn_1', 5, 6))).rejects.toBeInstanceOf(ValidationError);
      expect((await journal.readEvents('sesn_1')).map((e) => e.seq)).toEqual([1]);
    });

    it('lets exactly one of two writers racing for the same seq win, and keeps none of the loser', async () => {
      const { journal } = store();
      await journal.appendEvents('sesn_1', batch('sesn_1', 1, 1));
      const a = batch('sesn_1', 2, 3, 'cmd_a');
      const b = batch('sesn_1', 2, 4, 'cmd_b');
      const results = await Promise.allSettled([journal.appendEvents('sesn_1', a), journal.appendEvents('sesn_1', b)]);

      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(1);
      expect(lost[0]?.reason).toBeInstanceOf(ConcurrencyError);
      const winner = results[0]?.status === 'fulfilled' ? a : b;
      const loser = winner === a ? 'cmd_b' : 'cmd_a';
      expect(await journal.readEvents('sesn_1')).toEqual([...batch('sesn_1', 1, 1), ...winner]);
      expect(await journal.eventsOfCommand('sesn_1', loser)).toEqual([]);
      expect(await journal.lastSeq('sesn_1')).toBe(winner.length + 1);
    });

    it('treats a stale writer overlapping the tail as a conflict and writes none of its batch', async () => {
      const { journal } = store();
      await journal.appendEvents('sesn_1', batch('sesn_1', 1, 3));
      await expect(journal.appendEvents('sesn_1', batch('sesn_1', 3, 4, 'cmd_stale'))).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await journal.lastSeq('sesn_1')).toBe(3);
      expect(await journal.eventsOfCommand('sesn_1', 'cmd_stale')).toEqual([]);
    });

    it('reads after a seq in ascending pages and before a seq in descending pages', async () => {
      const { journal } = store();
      await journal.appendEvents('sesn_1', batch('sesn_1', 1, 7));
      const seqs = async (q: Parameters<BerthStore['journal']['readEvents']>[1]) => (await journal.readEvents('sesn_1', q)).map((e) => e.seq);

      expect(await seqs({ afterSeq: 2, limit: 3 })).toEqual([3, 4, 5]);
      expect(await seqs({ afterSeq: 5, limit: 3 })).toEqual([6, 7]);
      expect(await seqs({ afterSeq: 7, limit: 3 })).toEqual([]);
      expect(await seqs({ order: 'desc', limit: 2 })).toEqual([7, 6]);
      expect(await seqs({ order: 'desc', beforeSeq: 6, limit: 2 })).toEqual([5, 4]);
      expect(await seqs({ order: 'desc', beforeSeq: 2 })).toEqual([1]);
    });

    it('filters by event type, combined with a page position', async () => {
      const { journal } = store();
      await journal.appendEvents('sesn_1', batch('sesn_1', 1, 7));
      const started = await journal.readEvents('sesn_1', { types: ['TurnStarted'] });
      expect(started.map((e) => [e.seq, e.type])).toEqual([
        [1, 'TurnStarted'],
        [3, 'TurnStarted'],
        [5, 'TurnStarted'],
        [7, 'TurnStarted'],
      ]);
      expect((await journal.readEvents('sesn_1', { types: ['TurnCompleted'], afterSeq: 2, limit: 1 })).map((e) => e.seq)).toEqual([4]);
      expect((await journal.readEvents('sesn_1', { types: ['TurnCompleted', 'TurnStarted'], order: 'desc', limit: 2 })).map((e) => e.seq)).toEqual([7, 6]);
      expect(await journal.readEvents('sesn_1', { types: ['SessionCreated'] })).toEqual([]);
    });

    it("finds the events one command appended, in seq order (redelivery detection)", async () => {
      const { journal } = store();
      await journal.appendEvents('sesn_1', batch('sesn_1', 1, 1, 'cmd_first'));
      const second = batch('sesn_1', 2, 4, 'cmd_second');
      await journal.appendEvents('sesn_1', second);
      expect(await journal.eventsOfCommand('sesn_1', 'cmd_second')).toEqual(second);
      expect(await journal.eventsOfCommand('sesn_1', 'cmd_unknown')).toEqual([]);
      expect(await journal.eventsOfCommand('sesn_2', 'cmd_second')).toEqual([]);
    });

    it('keeps committed events in the outbox, oldest first, until they are marked published', async () => {
      const { journal } = store();
      await journal.appendEvents('sesn_1', batch('sesn_1', 1, 2));
      await journal.appendEvents('sesn_2', batch('sesn_2', 1, 1));
      await journal.appendEvents('sesn_1', batch('sesn_1', 3, 3));
      const key = (e: { session_id: string; seq: number }) => `${e.session_id}:${e.seq}`;

      expect((await journal.unpublished(10)).map(key)).toEqual(['sesn_1:1', 'sesn_1:2', 'sesn_2:1', 'sesn_1:3']);
      expect((await journal.unpublished(2)).map(key)).toEqual(['sesn_1:1', 'sesn_1:2']);

      await journal.markPublished('sesn_1', [1, 2]);
      await journal.markPublished('sesn_1', [1]);
      expect((await journal.unpublished(10)).map(key)).toEqual(['sesn_2:1', 'sesn_1:3']);
      expect(await journal.unpublished(10)).toEqual([batch('sesn_2', 1, 1)[0], batch('sesn_1', 3, 3)[0]]);

      await journal.markPublished('sesn_2', [1]);
      await journal.markPublished('sesn_1', [3]);
      expect(await journal.unpublished(10)).toEqual([]);
      expect(await journal.readEvents('sesn_1')).toHaveLength(3);
    });
  });
}
