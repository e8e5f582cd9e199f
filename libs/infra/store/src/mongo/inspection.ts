import type { AgentExtent, OutboxBacklog, SessionPosition, StoreInspection, TranscriptExtent } from '@berth/ports';
import type { ClientSession, Collection, Document, Filter } from 'mongodb';
import { checkLimit } from '../shared/paging';
import type { MongoContext } from './context';

/** How many of the oldest outbox entries are checked for events missing from the journal. */
const DANGLING_SAMPLE = 1_000;

/**
 * The next `limit` distinct values of `field` after `after`, one index seek each (a skip scan), so
 * a page costs `limit` seeks however large the collection is.
 */
async function nextDistinct<T extends Document>(collection: Collection<T>, field: string, after: string | null, limit: number, session: ClientSession): Promise<string[]> {
  const values: string[] = [];
  for (let last = after; values.length < limit; ) {
    const filter = (last === null ? {} : { [field]: { $gt: last } }) as Filter<T>;
    const doc = await collection.findOne(filter, { session, sort: { [field]: 1 }, projection: { [field]: 1 } });
    const value = doc?.[field] as string | undefined;
    if (value === undefined) break;
    values.push(value);
    last = value;
  }
  return values;
}

const mergedPage = (lists: readonly (readonly string[])[], limit: number): string[] => [...new Set(lists.flat())].sort().slice(0, limit);

/** Every page is read in one snapshot session: one point in time while commits go on. */
export class MongoInspection implements StoreInspection {
  constructor(private readonly m: MongoContext) {}

  async sessionPositions(after: string | null, limit: number): Promise<readonly SessionPosition[]> {
    const n = checkLimit(limit);
    const { c } = this.m;
    return this.m.atOnePointInTime(async (session) => {
      const ids = mergedPage(
        [
          await nextDistinct(c.journal, 'session_id', after, n, session),
          (await c.snapshots.find(after === null ? {} : { _id: { $gt: after } }, { session, sort: { _id: 1 }, limit: n, projection: { _id: 1 } }).toArray()).map((d) => d._id),
          (await c.sessions.find(after === null ? {} : { _id: { $gt: after } }, { session, sort: { _id: 1 }, limit: n, projection: { _id: 1 } }).toArray()).map((d) => d._id),
        ],
        n,
      );
      if (ids.length === 0) return [];
      const journal = new Map(
        (
          await c.journal
            .aggregate<{ _id: string; events: number; first_seq: number; last_seq: number }>(
              [{ $match: { session_id: { $in: ids } } }, { $group: { _id: '$session_id', events: { $sum: 1 }, first_seq: { $min: '$seq' }, last_seq: { $max: '$seq' } } }],
              { session },
            )
            .toArray()
        ).map(({ _id, ...facts }) => [_id, facts]),
      );
      const snapshots = new Map((await c.snapshots.find({ _id: { $in: ids } }, { session, projection: { version: 1 } }).toArray()).map((d) => [d._id, d.version]));
      const rows = new Map((await c.sessions.find({ _id: { $in: ids } }, { session, projection: { last_seq: 1 } }).toArray()).map((d) => [d._id, d.last_seq]));
      return ids.map((session_id) => ({
        session_id,
        journal: journal.get(session_id) ?? null,
        snapshot_version: snapshots.get(session_id) ?? null,
        record_last_seq: rows.get(session_id) ?? null,
      }));
    });
  }

  async transcriptExtents(after: Readonly<{ session_id: string; path: string }> | null, limit: number): Promise<readonly TranscriptExtent[]> {
    const n = checkLimit(limit);
    const { c } = this.m;
    return this.m.atOnePointInTime(async (session) => {
      const files: { session_id: string; path: string }[] = [];
      for (let last = after; files.length < n; ) {
        const filter = last === null ? {} : { $or: [{ session_id: { $gt: last.session_id } }, { session_id: last.session_id, path: { $gt: last.path } }] };
        const doc = await c.transcripts.findOne(filter, { session, sort: { session_id: 1, path: 1 }, projection: { session_id: 1, path: 1 } });
        if (!doc) break;
        last = { session_id: doc.session_id, path: doc.path };
        files.push(last);
      }
      if (files.length === 0) return [];
      const extents = await c.transcripts
        .aggregate<TranscriptExtent & { _id: unknown }>(
          [
            { $match: { $or: files } },
            {
              $group: {
                _id: { session_id: '$session_id', path: '$path' },
                pieces: { $sum: 1 },
                first_offset: { $min: '$offset' },
                bytes: { $sum: '$bytes' },
                end: { $max: { $add: ['$offset', '$bytes'] } },
              },
            },
            { $project: { _id: 0, session_id: '$_id.session_id', path: '$_id.path', pieces: 1, first_offset: 1, bytes: 1, end: 1 } },
            { $sort: { session_id: 1, path: 1 } },
          ],
          { session },
        )
        .toArray();
      return extents.map(({ session_id, path, pieces, first_offset, bytes, end }) => ({ session_id, path, pieces, first_offset, bytes, end }));
    });
  }

  async agentExtents(after: string | null, limit: number): Promise<readonly AgentExtent[]> {
    const n = checkLimit(limit);
    const { c } = this.m;
    return this.m.atOnePointInTime(async (session) => {
      const ids = mergedPage(
        [
          (await c.agents.find(after === null ? {} : { _id: { $gt: after } }, { session, sort: { _id: 1 }, limit: n, projection: { _id: 1 } }).toArray()).map((d) => d._id),
          await nextDistinct(c.agentVersions, 'agent_id', after, n, session),
        ],
        n,
      );
      if (ids.length === 0) return [];
      const heads = new Map((await c.agents.find({ _id: { $in: ids } }, { session, projection: { latest_version: 1 } }).toArray()).map((d) => [d._id, d.latest_version]));
      const versions = new Map(
        (
          await c.agentVersions
            .aggregate<{ _id: string; versions: number; max_version: number }>([{ $match: { agent_id: { $in: ids } } }, { $group: { _id: '$agent_id', versions: { $sum: 1 }, max_version: { $max: '$version' } } }], {
              session,
            })
            .toArray()
        ).map((d) => [d._id, d]),
      );
      return ids.map((agent_id) => ({
        agent_id,
        latest_version: heads.get(agent_id) ?? null,
        versions: versions.get(agent_id)?.versions ?? 0,
        max_version: versions.get(agent_id)?.max_version ?? 0,
      }));
    });
  }

  async outboxBacklog(): Promise<OutboxBacklog> {
    const { c } = this.m;
    return this.m.atOnePointInTime(async (session) => {
      const [totals] = await c.outbox
        .aggregate<{ events: number; oldest: string | null }>([{ $group: { _id: null, events: { $sum: { $add: [{ $subtract: ['$to', '$from'] }, 1] } }, oldest: { $min: '$occurred_at' } } }], { session })
        .toArray();
      const oldest = await c.outbox.find({}, { session, sort: { order: 1, _id: 1 }, limit: DANGLING_SAMPLE }).toArray();
      let dangling = 0;
      if (oldest.length > 0) {
        const found = await c.journal
          .aggregate<{ _id: { s: string; q: number } }>([{ $match: { $or: oldest.map((e) => ({ session_id: e.session_id, seq: e.from })) } }, { $project: { _id: { s: '$session_id', q: '$seq' } } }], { session })
          .toArray();
        const present = new Set(found.map((f) => `${f._id.s}\n${f._id.q}`));
        dangling = oldest.filter((e) => !present.has(`${e.session_id}\n${e.from}`)).length;
      }
      return { events: totals?.events ?? 0, oldest_occurred_at: totals?.oldest ?? null, dangling };
    });
  }
}
