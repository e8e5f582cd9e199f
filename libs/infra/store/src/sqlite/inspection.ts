import type { AgentExtent, OutboxBacklog, SessionPosition, StoreInspection, TranscriptExtent } from '@berth/ports';
import { checkLimit } from '../shared/paging';
import type { SqliteDb } from './sqlite-db';

type PositionRow = { session_id: string; events: number; first_seq: number | null; last_seq: number | null; snapshot_version: number | null; record_last_seq: number | null };

/** Each page is one read transaction: a consistent cut, however busy the writers are. */
export class SqliteInspection implements StoreInspection {
  constructor(private readonly db: SqliteDb) {}

  async sessionPositions(after: string | null, limit: number): Promise<readonly SessionPosition[]> {
    const n = checkLimit(limit);
    const from = after ?? '';
    const rows = this.db.read(
      () =>
        this.db
          .stmt(
            `WITH ids AS (
               SELECT id FROM (SELECT DISTINCT session_id AS id FROM journal WHERE session_id > ? ORDER BY session_id LIMIT ?)
               UNION SELECT id FROM (SELECT session_id AS id FROM snapshots WHERE session_id > ? ORDER BY session_id LIMIT ?)
               UNION SELECT id FROM (SELECT id FROM sessions WHERE id > ? ORDER BY id LIMIT ?)
               ORDER BY id LIMIT ?)
             SELECT ids.id AS session_id,
               (SELECT COUNT(*) FROM journal j WHERE j.session_id = ids.id) AS events,
               (SELECT MIN(seq) FROM journal j WHERE j.session_id = ids.id) AS first_seq,
               (SELECT MAX(seq) FROM journal j WHERE j.session_id = ids.id) AS last_seq,
               (SELECT version FROM snapshots s WHERE s.session_id = ids.id) AS snapshot_version,
               (SELECT last_seq FROM sessions r WHERE r.id = ids.id) AS record_last_seq
             FROM ids ORDER BY ids.id`,
          )
          .all(from, n, from, n, from, n, n) as PositionRow[],
    );
    return rows.map((r) => ({
      session_id: r.session_id,
      journal: r.events > 0 ? { events: r.events, first_seq: r.first_seq as number, last_seq: r.last_seq as number } : null,
      snapshot_version: r.snapshot_version,
      record_last_seq: r.record_last_seq,
    }));
  }

  async transcriptExtents(after: Readonly<{ session_id: string; path: string }> | null, limit: number): Promise<readonly TranscriptExtent[]> {
    return this.db
      .stmt(
        `SELECT session_id, path, COUNT(*) AS pieces, MIN("offset") AS first_offset, SUM(bytes) AS bytes, MAX("offset" + bytes) AS "end"
         FROM transcript_chunks WHERE (session_id, path) > (?, ?)
         GROUP BY session_id, path ORDER BY session_id, path LIMIT ?`,
      )
      .all(after?.session_id ?? '', after?.path ?? '', checkLimit(limit)) as TranscriptExtent[];
  }

  async agentExtents(after: string | null, limit: number): Promise<readonly AgentExtent[]> {
    const n = checkLimit(limit);
    const from = after ?? '';
    return this.db.read(
      () =>
        this.db
          .stmt(
            `WITH ids AS (
               SELECT id FROM (SELECT id FROM agents WHERE id > ? ORDER BY id LIMIT ?)
               UNION SELECT id FROM (SELECT DISTINCT id FROM agent_versions WHERE id > ? ORDER BY id LIMIT ?)
               ORDER BY id LIMIT ?)
             SELECT ids.id AS agent_id,
               (SELECT latest_version FROM agents a WHERE a.id = ids.id) AS latest_version,
               (SELECT COUNT(*) FROM agent_versions v WHERE v.id = ids.id) AS versions,
               (SELECT COALESCE(MAX(version), 0) FROM agent_versions v WHERE v.id = ids.id) AS max_version
             FROM ids ORDER BY ids.id`,
          )
          .all(from, n, from, n, n) as AgentExtent[],
    );
  }

  async outboxBacklog(): Promise<OutboxBacklog> {
    const row = this.db.stmt('SELECT COUNT(*) AS events, MIN(occurred_at) AS oldest FROM journal WHERE published = 0').get() as { events: number; oldest: string | null };
    // The outbox is the journal's own rows here: an entry cannot point at a missing event.
    return { events: row.events, oldest_occurred_at: row.oldest, dangling: 0 };
  }
}
