import type { BerthStore, SessionPosition } from '@berth/ports';
import { StoreLimits } from '../shared/limits';
import { agent, commitOf } from './fixtures';

export function inspectionContract(store: () => BerthStore): void {
  describe('inspection (what berth store check reads)', () => {
    it("reports each session's position in the journal, its snapshot and its row, a page at a time in id order", async () => {
      const s = store();
      await s.journal.commit(commitOf('sesn_b', 1, 2));
      await s.journal.commit(commitOf('sesn_b', 3, 5, { snapshot: false, record: false }));
      await s.journal.commit(commitOf('sesn_a', 1, 1, { snapshot: false }));
      await s.journal.commit(commitOf('sesn_c', 1, 3, { record: false }));

      const expected: SessionPosition[] = [
        { session_id: 'sesn_a', journal: { events: 1, first_seq: 1, last_seq: 1 }, snapshot_version: null, record_last_seq: 1 },
        { session_id: 'sesn_b', journal: { events: 5, first_seq: 1, last_seq: 5 }, snapshot_version: 2, record_last_seq: 2 },
        { session_id: 'sesn_c', journal: { events: 3, first_seq: 1, last_seq: 3 }, snapshot_version: 3, record_last_seq: null },
      ];
      expect(await s.inspection.sessionPositions(null, 10)).toEqual(expected);
      expect(await s.inspection.sessionPositions(null, 2)).toEqual(expected.slice(0, 2));
      expect(await s.inspection.sessionPositions('sesn_b', 2)).toEqual(expected.slice(2));
      expect(await s.inspection.sessionPositions('sesn_c', 2)).toEqual([]);
    });

    it('reports each mirrored transcript file by its pieces, and agents by their versions', async () => {
      const s = store();
      const big = 'y'.repeat(StoreLimits.transcriptPieceBytes * 2 + 10);
      await s.transcripts.append({ session_id: 'sesn_1', path: 'b.jsonl', offset: 0, data: big });
      await s.transcripts.append({ session_id: 'sesn_1', path: 'a.jsonl', offset: 0, data: 'line\n' });
      await s.transcripts.append({ session_id: 'sesn_1', path: 'a.jsonl', offset: 5, data: 'more\n' });
      expect(await s.inspection.transcriptExtents(null, 10)).toEqual([
        { session_id: 'sesn_1', path: 'a.jsonl', pieces: 2, first_offset: 0, bytes: 10, end: 10 },
        { session_id: 'sesn_1', path: 'b.jsonl', pieces: 3, first_offset: 0, bytes: big.length, end: big.length },
      ]);
      expect(await s.inspection.transcriptExtents({ session_id: 'sesn_1', path: 'a.jsonl' }, 10)).toHaveLength(1);

      for (const v of [1, 2, 3]) await s.agents.putVersion(agent({ id: 'agent_1', version: v }), v - 1);
      await s.agents.putVersion(agent({ id: 'agent_2', version: 1 }), 0);
      expect(await s.inspection.agentExtents(null, 10)).toEqual([
        { agent_id: 'agent_1', latest_version: 3, versions: 3, max_version: 3 },
        { agent_id: 'agent_2', latest_version: 1, versions: 1, max_version: 1 },
      ]);
      expect(await s.inspection.agentExtents('agent_1', 10)).toHaveLength(1);
    });

    it('counts the outbox backlog', async () => {
      const s = store();
      expect(await s.inspection.outboxBacklog()).toEqual({ events: 0, oldest_occurred_at: null, dangling: 0 });
      await s.journal.commit(commitOf('sesn_1', 1, 2));
      await s.journal.commit(commitOf('sesn_2', 1, 1));
      await s.journal.markPublished([{ sessionId: 'sesn_1', seqs: [1, 2] }]);
      expect(await s.inspection.outboxBacklog()).toEqual({ events: 1, oldest_occurred_at: expect.any(String), dangling: 0 });
    });
  });
}
