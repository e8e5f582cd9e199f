import { ValidationError } from '@berth/core';
import type { BerthStore, OutboxPage } from '@berth/ports';
import { batch, commitOf } from './fixtures';

const key = (e: { session_id: string; seq: number }) => `${e.session_id}:${e.seq}`;

/** Walks the outbox page by page, as the relay does; returns every page's keys. */
async function outboxPages(store: BerthStore, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let after: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const page: OutboxPage = await store.journal.unpublished({ limit, after });
    expect(page.events.length).toBeLessThanOrEqual(limit);
    if (page.events.length > 0) pages.push(page.events.map(key));
    if (page.next === null) return pages;
    after = page.next;
  }
  throw new Error('the outbox walk did not end');
}

export function journalContract(store: () => BerthStore): void {
  describe('journal', () => {
    it('keeps gap-free seqs per session and reads them back unchanged', async () => {
      const { journal } = store();
      await journal.commit(commitOf('sesn_1', 1, 2));
      await journal.commit(commitOf('sesn_1', 3, 3));
      await journal.commit(commitOf('sesn_2', 1, 1));

      expect(await journal.lastSeq('sesn_1')).toBe(3);
      expect(await journal.lastSeq('sesn_2')).toBe(1);
      expect(await journal.lastSeq('sesn_none')).toBe(0);
      expect(await journal.readEvents('sesn_1')).toEqual([...batch('sesn_1', 1, 2, 'cmd_1'), ...batch('sesn_1', 3, 3, 'cmd_3')]);
    });

    it('reads after a seq in ascending pages and before a seq in descending pages', async () => {
      const { journal } = store();
      await journal.commit(commitOf('sesn_1', 1, 7));
      const seqs = async (q: Parameters<BerthStore['journal']['readEvents']>[1]) => (await journal.readEvents('sesn_1', q)).map((e) => e.seq);

      expect(await seqs({ afterSeq: 2, limit: 3 })).toEqual([3, 4, 5]);
      expect(await seqs({ afterSeq: 5, limit: 3 })).toEqual([6, 7]);
      expect(await seqs({ afterSeq: 7, limit: 3 })).toEqual([]);
      expect(await seqs({ order: 'desc', limit: 2 })).toEqual([7, 6]);
      expect(await seqs({ order: 'desc', beforeSeq: 6, limit: 2 })).toEqual([5, 4]);
      expect(await seqs({ order: 'desc', beforeSeq: 2 })).toEqual([1]);
      await expect(seqs({ limit: 0 })).rejects.toBeInstanceOf(ValidationError);
    });

    it('filters by event type, combined with a page position', async () => {
      const { journal } = store();
      await journal.commit(commitOf('sesn_1', 1, 7));
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
      expect(await journal.readEvents('sesn_1', { types: [] })).toEqual([]);
    });

    it('finds the events one command committed, in seq order (redelivery detection)', async () => {
      const { journal } = store();
      await journal.commit(commitOf('sesn_1', 1, 1, { commandId: 'cmd_first' }));
      await journal.commit(commitOf('sesn_1', 2, 4, { commandId: 'cmd_second' }));
      expect(await journal.eventsOfCommand('sesn_1', 'cmd_second')).toEqual(batch('sesn_1', 2, 4, 'cmd_second'));
      expect(await journal.eventsOfCommand('sesn_1', 'cmd_unknown')).toEqual([]);
      expect(await journal.eventsOfCommand('sesn_2', 'cmd_second')).toEqual([]);
    });

    it('keeps committed events in the outbox, oldest commit first, until they are marked published', async () => {
      const { journal } = store();
      await journal.commit(commitOf('sesn_1', 1, 2));
      await journal.commit(commitOf('sesn_2', 1, 1));
      await journal.commit(commitOf('sesn_1', 3, 3));

      expect((await journal.unpublished({ limit: 10 })).events.map(key)).toEqual(['sesn_1:1', 'sesn_1:2', 'sesn_2:1', 'sesn_1:3']);
      expect(await journal.unpublished({ limit: 10 })).toEqual({ events: [...batch('sesn_1', 1, 2, 'cmd_1'), ...batch('sesn_2', 1, 1, 'cmd_1'), ...batch('sesn_1', 3, 3, 'cmd_3')], next: null });

      await journal.markPublished([{ sessionId: 'sesn_1', seqs: [1, 2] }]);
      await journal.markPublished([{ sessionId: 'sesn_1', seqs: [1, 2] }]);
      expect((await journal.unpublished({ limit: 10 })).events.map(key)).toEqual(['sesn_2:1', 'sesn_1:3']);

      await journal.markPublished([
        { sessionId: 'sesn_2', seqs: [1] },
        { sessionId: 'sesn_1', seqs: [3] },
      ]);
      expect(await journal.unpublished({ limit: 10 })).toEqual({ events: [], next: null });
      expect(await journal.readEvents('sesn_1')).toHaveLength(3);
    });

    it('walks the outbox in pages after a cursor, each session in seq order, never losing a commit made during the walk', async () => {
      const { journal } = store();
      for (let i = 1; i <= 5; i++) {
        await journal.commit(commitOf('sesn_a', i, i, { commandId: `cmd_a${i}` }));
        await journal.commit(commitOf('sesn_b', i, i, { commandId: `cmd_b${i}` }));
      }
      const first = await journal.unpublished({ limit: 4 });
      expect(first.events.map(key)).toEqual(['sesn_a:1', 'sesn_b:1', 'sesn_a:2', 'sesn_b:2']);
      expect(first.next).toEqual(expect.any(String));
      // A commit landing while the relay walks is served by this walk or, at the latest, the next one.
      await journal.commit(commitOf('sesn_c', 1, 1));
      const rest: string[] = [];
      for (let after = first.next; after !== null; ) {
        const page: OutboxPage = await journal.unpublished({ limit: 4, after });
        rest.push(...page.events.map(key));
        after = page.next;
      }
      expect(rest.filter((k) => k !== 'sesn_c:1')).toEqual(['sesn_a:3', 'sesn_b:3', 'sesn_a:4', 'sesn_b:4', 'sesn_a:5', 'sesn_b:5']);
      const next = (await outboxPages(store(), 3)).flat();
      expect([...next].sort()).toEqual([...first.events.map(key), 'sesn_a:3', 'sesn_b:3', 'sesn_a:4', 'sesn_b:4', 'sesn_a:5', 'sesn_b:5', 'sesn_c:1'].sort());
      for (const session of ['sesn_a', 'sesn_b']) {
        expect(next.filter((k) => k.startsWith(`${session}:`))).toEqual([1, 2, 3, 4, 5].map((seq) => `${session}:${seq}`));
      }
    });

    it('gives one session\'s unpublished events below a seq, in seq order, whoever committed them', async () => {
      const { journal } = store();
      await journal.commit(commitOf('sesn_1', 1, 2));
      await journal.commit(commitOf('sesn_2', 1, 1));
      await journal.commit(commitOf('sesn_1', 3, 4, { commandId: 'cmd_3' }));
      await journal.commit(commitOf('sesn_1', 5, 5, { commandId: 'cmd_5' }));
      await journal.markPublished([{ sessionId: 'sesn_1', seqs: [1, 2] }]);

      expect(await journal.unpublishedBefore('sesn_1', 5)).toEqual(batch('sesn_1', 3, 4, 'cmd_3'));
      // A commit straddling the bound comes cut at it.
      expect((await journal.unpublishedBefore('sesn_1', 4)).map(key)).toEqual(['sesn_1:3']);
      expect(await journal.unpublishedBefore('sesn_1', 3)).toEqual([]);
      expect((await journal.unpublishedBefore('sesn_2', 99)).map(key)).toEqual(['sesn_2:1']);
      await journal.markPublished([{ sessionId: 'sesn_1', seqs: [3, 4] }]);
      expect(await journal.unpublishedBefore('sesn_1', 6)).toEqual(batch('sesn_1', 5, 5, 'cmd_5'));
      expect(await journal.unpublishedBefore('sesn_unknown', 10)).toEqual([]);
    });

    it('refuses an outbox cursor it did not issue and a bad limit', async () => {
      const { journal } = store();
      await expect(journal.unpublished({ limit: 0 })).rejects.toBeInstanceOf(ValidationError);
      await expect(journal.unpublished({ limit: 10, after: 'not a cursor' })).rejects.toBeInstanceOf(ValidationError);
    });
  });
}
