import { ConcurrencyError, ValidationError } from '@berth/core';
import type { BerthStore } from '@berth/ports';
import { at, batch, commitOf, event } from './fixtures';

const seqsOf = async (store: BerthStore, sessionId: string) => (await store.journal.readEvents(sessionId)).map((e) => `${e.seq}:${e.command_id}`);
const settled = (p: Promise<unknown>): Promise<'resolved' | 'rejected'> => p.then(() => 'resolved' as const, () => 'rejected' as const);
const outbox = async (store: BerthStore) => (await store.journal.unpublished({ limit: 100 })).events.map((e) => `${e.session_id}:${e.seq}`);

/**
 * One command's commit: events, snapshot, read-model row and outbox entries, all or nothing. These
 * are the cases a store without one atomic commit per command (the old MongoDB adapter) failed.
 */
export function commitContract(store: () => BerthStore, failRowWrites: () => Promise<() => Promise<void>>): void {
  describe('command commit', () => {
    it("writes the command's events, its snapshot, its read-model row and its outbox entries", async () => {
      const s = store();
      await s.journal.commit(commitOf('sesn_1', 1, 2, { commandId: 'cmd_a' }));
      expect(await seqsOf(s, 'sesn_1')).toEqual(['1:cmd_a', '2:cmd_a']);
      expect(await s.snapshots.load('sesn_1')).toEqual({ sessionId: 'sesn_1', version: 2, state: { folded: 2, by: 'cmd_a' }, updatedAt: at(2) });
      expect(await s.sessions.getById('sesn_1')).toMatchObject({ last_seq: 2, title: 'cmd_a' });
      expect(await outbox(s)).toEqual(['sesn_1:1', 'sesn_1:2']);
    });

    it("replaces the snapshot and the row with each commit's; a commit without them leaves the stored ones lagging", async () => {
      const s = store();
      await s.journal.commit(commitOf('sesn_1', 1, 1, { commandId: 'cmd_a' }));
      await s.journal.commit(commitOf('sesn_1', 2, 3, { commandId: 'cmd_b', record: { status: 'running' } }));
      expect(await s.snapshots.load('sesn_1')).toMatchObject({ version: 3, state: { by: 'cmd_b' } });
      expect(await s.sessions.getById('sesn_1')).toMatchObject({ last_seq: 3, status: 'running', title: 'cmd_b' });

      await s.journal.commit(commitOf('sesn_1', 4, 5, { commandId: 'cmd_c', snapshot: false, record: false }));
      const snapshot = await s.snapshots.load('sesn_1');
      expect(snapshot).toMatchObject({ version: 3 });
      expect((await s.journal.readEvents('sesn_1', { afterSeq: snapshot?.version ?? 0 })).map((e) => e.seq)).toEqual([4, 5]);
      expect(await s.sessions.getById('sesn_1')).toMatchObject({ last_seq: 3 });
    });

    it('refuses a taken seq with a ConcurrencyError and writes nothing of that commit', async () => {
      const s = store();
      await s.journal.commit(commitOf('sesn_1', 1, 2, { commandId: 'cmd_a' }));
      await expect(s.journal.commit(commitOf('sesn_1', 2, 3, { commandId: 'cmd_late' }))).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await seqsOf(s, 'sesn_1')).toEqual(['1:cmd_a', '2:cmd_a']);
      expect(await s.snapshots.load('sesn_1')).toMatchObject({ version: 2, state: { by: 'cmd_a' } });
      expect(await s.sessions.getById('sesn_1')).toMatchObject({ last_seq: 2, title: 'cmd_a' });
      expect(await outbox(s)).toEqual(['sesn_1:1', 'sesn_1:2']);
    });

    it('treats a position taken by another command as a lost race, never as "already inserted"', async () => {
      const s = store();
      await s.journal.commit(commitOf('sesn_1', 1, 1, { commandId: 'cmd_first' }));
      await s.journal.commit(commitOf('sesn_1', 2, 3, { commandId: 'cmd_a' }));
      // Same seqs, same event types, another command: a duplicate of the position only.
      await expect(s.journal.commit(commitOf('sesn_1', 2, 3, { commandId: 'cmd_b' }))).rejects.toBeInstanceOf(ConcurrencyError);
      await expect(s.journal.commit(commitOf('sesn_1', 3, 3, { commandId: 'cmd_a' }))).rejects.toBeInstanceOf(ConcurrencyError);
      expect(await s.journal.eventsOfCommand('sesn_1', 'cmd_b')).toEqual([]);
      expect(await seqsOf(s, 'sesn_1')).toEqual(['1:cmd_first', '2:cmd_a', '3:cmd_a']);
      expect(await s.sessions.getById('sesn_1')).toMatchObject({ title: 'cmd_a' });
    });

    it('accepts a commit retried after an unknown outcome once, without writing it twice', async () => {
      const s = store();
      const commit = commitOf('sesn_1', 1, 3, { commandId: 'cmd_a' });
      await s.journal.commit(commit);
      // The first call's answer was lost (a timeout after the server committed); the caller retries.
      await s.journal.commit(commit);
      await s.journal.commit(commit);
      expect(await seqsOf(s, 'sesn_1')).toEqual(['1:cmd_a', '2:cmd_a', '3:cmd_a']);
      expect(await s.journal.lastSeq('sesn_1')).toBe(3);
      expect(await outbox(s)).toEqual(['sesn_1:1', 'sesn_1:2', 'sesn_1:3']);
      await s.journal.commit(commitOf('sesn_1', 4, 4, { commandId: 'cmd_b' }));
      expect(await s.journal.lastSeq('sesn_1')).toBe(4);
      // Retried after the session moved on: still its own, still a no-op.
      await s.journal.commit(commit);
      expect(await s.sessions.getById('sesn_1')).toMatchObject({ last_seq: 4, title: 'cmd_b' });
    });

    it('writes nothing of a commit that fails between its writes, and the same commit succeeds afterwards', async () => {
      const s = store();
      await s.journal.commit(commitOf('sesn_1', 1, 1, { commandId: 'cmd_a' }));
      const restore = await failRowWrites();
      try {
        // The events and the snapshot are written before the read-model row, which the store refuses.
        // (Judged by settling, not `rejects.toThrow()`: a driver's native error may come from another
        // jest realm, which `toThrow` does not count as an Error.)
        expect(await settled(s.journal.commit(commitOf('sesn_1', 2, 3, { commandId: 'cmd_b' })))).toBe('rejected');
        expect(await settled(s.journal.commit(commitOf('sesn_2', 1, 1, { commandId: 'cmd_c' })))).toBe('rejected');
      } finally {
        await restore();
      }
      expect(await seqsOf(s, 'sesn_1')).toEqual(['1:cmd_a']);
      expect(await s.journal.lastSeq('sesn_2')).toBe(0);
      expect(await s.journal.eventsOfCommand('sesn_1', 'cmd_b')).toEqual([]);
      expect(await s.snapshots.load('sesn_1')).toMatchObject({ version: 1 });
      expect(await s.snapshots.load('sesn_2')).toBeNull();
      expect(await s.sessions.getById('sesn_2')).toBeNull();
      expect(await outbox(s)).toEqual(['sesn_1:1']);

      await s.journal.commit(commitOf('sesn_1', 2, 3, { commandId: 'cmd_b' }));
      expect(await seqsOf(s, 'sesn_1')).toEqual(['1:cmd_a', '2:cmd_b', '3:cmd_b']);
      expect(await s.sessions.getById('sesn_1')).toMatchObject({ last_seq: 3 });
    });

    it('refuses a commit that is not one consecutive batch after the last seq, writing nothing', async () => {
      const s = store();
      await expect(s.journal.commit(commitOf('sesn_1', 2, 3))).rejects.toBeInstanceOf(ValidationError);
      await s.journal.commit(commitOf('sesn_1', 1, 1));
      await expect(s.journal.commit({ sessionId: 'sesn_1', events: [event('sesn_1', 2), event('sesn_1', 4)] })).rejects.toBeInstanceOf(ValidationError);
      await expect(s.journal.commit({ sessionId: 'sesn_1', events: [event('sesn_other', 2)] })).rejects.toBeInstanceOf(ValidationError);
      await expect(s.journal.commit({ sessionId: 'sesn_1', events: [] })).rejects.toBeInstanceOf(ValidationError);
      await expect(s.journal.commit(commitOf('sesn_1', 5, 6))).rejects.toBeInstanceOf(ValidationError);
      expect((await s.journal.readEvents('sesn_1')).map((e) => e.seq)).toEqual([1]);
    });

    it("refuses a snapshot or row that is not at the commit's last seq", async () => {
      const s = store();
      const commit = commitOf('sesn_1', 1, 2);
      await expect(s.journal.commit({ ...commit, snapshot: { ...commit.snapshot!, version: 1 } })).rejects.toBeInstanceOf(ValidationError);
      await expect(s.journal.commit({ ...commit, record: { ...commit.record!, last_seq: 3 } })).rejects.toBeInstanceOf(ValidationError);
      expect(await s.journal.lastSeq('sesn_1')).toBe(0);
    });

    it('lets exactly one of two racing commits win, and keeps none of the loser', async () => {
      const s = store();
      await s.journal.commit(commitOf('sesn_1', 1, 1));
      const a = commitOf('sesn_1', 2, 3, { commandId: 'cmd_a' });
      const b = commitOf('sesn_1', 2, 4, { commandId: 'cmd_b' });
      const results = await Promise.allSettled([s.journal.commit(a), s.journal.commit(b)]);

      const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(lost).toHaveLength(1);
      expect(lost[0]?.reason).toBeInstanceOf(ConcurrencyError);
      const winner = results[0]?.status === 'fulfilled' ? a : b;
      const loser = winner === a ? 'cmd_b' : 'cmd_a';
      expect(await s.journal.readEvents('sesn_1')).toEqual([...batch('sesn_1', 1, 1), ...winner.events]);
      expect(await s.journal.eventsOfCommand('sesn_1', loser)).toEqual([]);
      expect(await s.sessions.getById('sesn_1')).toMatchObject({ title: winner === a ? 'cmd_a' : 'cmd_b' });
      expect(await s.snapshots.load('sesn_1')).toMatchObject({ version: winner.events.length + 1 });
    });
  });
}
