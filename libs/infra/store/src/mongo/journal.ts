import { ValidationError } from '@berth/core';
import type { RecordedEvent } from '@berth/contracts';
import type { CommandCommit, JournalQuery, OutboxPage, OutboxQuery, PublishedMark, SessionJournal } from '@berth/ports';
import { type ClientSession, type Filter, ObjectId } from 'mongodb';
import { commitVerdict, prepareCommit, type PreparedCommit } from '../shared/commit';
import { checkLimit } from '../shared/paging';
import { UNIQUE_KEYS, Unique, type JournalDoc, type OutboxDoc } from './collections';
import { PRIMARY, type MongoContext } from './context';
import { isDuplicateOn } from './errors';
import { sessionDocOf } from './sessions';

const parse = (docs: readonly { body: string }[]): RecordedEvent[] => docs.map((d) => JSON.parse(d.body) as RecordedEvent);

/** Another transaction inserted at our position between our read and our insert: run the transaction again to see whose it is. */
class PositionTaken extends Error {}

/**
 * The journal and the one writer of snapshots and read-model rows. A commit is ONE multi-document
 * transaction (so MongoDB must be a replica set; a single-node one is fine): it reads the session's
 * last event, inserts the command's events (the unique (session_id, seq) index is the conflict
 * point), one outbox entry, the snapshot and the row. A session's position is its highest journal
 * seq and nothing else, so a restored backup can never disagree with itself about it.
 *
 * The outbox holds one entry per commit. Entries are ordered by `order`: per session strictly
 * increasing (one past the session's previous commit), across sessions the committing kernel's
 * clock, so a page never hands out a session's events out of seq order.
 */
export class MongoJournal implements SessionJournal {
  constructor(private readonly m: MongoContext) {}

  async commit(commit: CommandCommit): Promise<void> {
    const prepared = prepareCommit(commit);
    await this.m.transaction((session) => this.write(prepared, session), (e) => e instanceof PositionTaken);
  }

  async readEvents(sessionId: string, query: JournalQuery = {}): Promise<RecordedEvent[]> {
    if (query.types && query.types.length === 0) return [];
    const seq: { $gt?: number; $lt?: number } = {};
    if (query.afterSeq !== undefined) seq.$gt = query.afterSeq;
    if (query.beforeSeq !== undefined) seq.$lt = query.beforeSeq;
    const filter: Filter<JournalDoc> = { session_id: sessionId };
    if (query.afterSeq !== undefined || query.beforeSeq !== undefined) filter.seq = seq;
    if (query.types) filter.type = { $in: [...query.types] };
    let cursor = this.m.c.journal.find(filter, { ...PRIMARY, projection: { body: 1 } }).sort({ seq: query.order === 'desc' ? -1 : 1 });
    if (query.limit !== undefined) cursor = cursor.limit(checkLimit(query.limit));
    return parse(await cursor.toArray());
  }

  async lastSeq(sessionId: string): Promise<number> {
    return (await this.m.c.journal.findOne({ session_id: sessionId }, { ...PRIMARY, sort: { seq: -1 }, projection: { seq: 1 } }))?.seq ?? 0;
  }

  async eventsOfCommand(sessionId: string, commandId: string): Promise<RecordedEvent[]> {
    return parse(await this.m.c.journal.find({ session_id: sessionId, command_id: commandId }, { ...PRIMARY, projection: { body: 1 } }).sort({ seq: 1 }).toArray());
  }

  async unpublished(query: OutboxQuery): Promise<OutboxPage> {
    const limit = checkLimit(query.limit);
    const after = decodeOutboxCursor(query.after);
    const filter: Filter<OutboxDoc> = after ? { $or: [{ order: { $gt: after.order } }, { order: after.order, _id: { $gt: after.id } }] } : {};
    const entries = await this.m.c.outbox.find(filter, { ...PRIMARY, sort: { order: 1, _id: 1 }, limit }).toArray();
    // Whole commits, up to `limit` events (a single larger commit comes alone).
    const taken: OutboxDoc[] = [];
    let events = 0;
    for (const entry of entries) {
      const size = entry.to - entry.from + 1;
      if (taken.length > 0 && events + size > limit) break;
      taken.push(entry);
      events += size;
    }
    const last = taken[taken.length - 1];
    if (!last) return { events: [], next: null };
    const docs = await this.m.c.journal
      .find({ $or: taken.map((e) => ({ session_id: e.session_id, seq: { $gte: e.from, $lte: e.to } })) }, { ...PRIMARY, projection: { session_id: 1, seq: 1, body: 1 } })
      .toArray();
    // An entry whose events are not in the journal (a restore that was not point-in-time) can never be published.
    const present = new Set(docs.map((d) => `${d.session_id}\n${d.seq}`));
    const dangling = taken.filter((e) => !present.has(`${e.session_id}\n${e.from}`));
    if (dangling.length > 0) await this.m.c.outbox.deleteMany({ _id: { $in: dangling.map((e) => e._id) } });
    // Page order: the entries' order, each entry's events in seq order.
    const position = new Map<string, number>();
    for (const e of taken) for (let seq = e.from; seq <= e.to; seq++) position.set(`${e.session_id}\n${seq}`, position.size);
    const ordered = docs.sort((a, b) => (position.get(`${a.session_id}\n${a.seq}`) ?? 0) - (position.get(`${b.session_id}\n${b.seq}`) ?? 0));
    const more = taken.length < entries.length || entries.length === limit;
    return { events: parse(ordered), next: more ? encodeOutboxCursor(last) : null };
  }

  async unpublishedBefore(sessionId: string, seq: number): Promise<RecordedEvent[]> {
    const entries = await this.m.c.outbox.find({ session_id: sessionId, from: { $lt: seq } }, { ...PRIMARY, projection: { from: 1, to: 1 } }).toArray();
    if (entries.length === 0) return [];
    const ranges = entries.map((e) => ({ session_id: sessionId, seq: { $gte: e.from, $lte: Math.min(e.to, seq - 1) } }));
    return parse(await this.m.c.journal.find({ $or: ranges }, { ...PRIMARY, projection: { body: 1 } }).sort({ seq: 1 }).toArray());
  }

  async markPublished(marks: readonly PublishedMark[]): Promise<void> {
    const covered = marks.flatMap(({ sessionId, seqs }) => contiguousRuns(seqs).map(([from, to]) => ({ session_id: sessionId, from: { $gte: from }, to: { $lte: to } })));
    if (covered.length === 0) return;
    await this.m.c.outbox.deleteMany({ $or: covered });
  }

  private async write(commit: PreparedCommit, session: ClientSession): Promise<void> {
    const { c } = this.m;
    const { sessionId } = commit;
    const last = await c.journal.findOne({ session_id: sessionId }, { session, sort: { seq: -1 }, projection: { seq: 1, commit_order: 1 } });
    const lastSeq = last?.seq ?? 0;
    const atFrom = commit.from <= lastSeq ? await c.journal.findOne({ session_id: sessionId, seq: commit.from }, { session, projection: { event_id: 1 } }) : null;
    if (commitVerdict(commit, lastSeq, atFrom?.event_id ?? null) === 'already-committed') return;
    const order = Math.max((last?.commit_order ?? 0) + 1, Date.now());
    const docs: JournalDoc[] = commit.events.map(({ event, body }) => ({
      _id: new ObjectId(),
      session_id: sessionId,
      seq: event.seq,
      type: event.type,
      command_id: event.command_id,
      event_id: event.id,
      occurred_at: event.occurred_at,
      commit_order: order,
      body,
    }));
    try {
      await c.journal.insertMany(docs, { session, ordered: true });
    } catch (e) {
      if (isDuplicateOn(e, Unique.position.name, UNIQUE_KEYS)) throw new PositionTaken(`session ${sessionId}: seq ${commit.from} was taken meanwhile`);
      throw e;
    }
    await c.outbox.insertOne({ _id: new ObjectId(), order, session_id: sessionId, from: commit.from, to: commit.to, occurred_at: docs[0]?.occurred_at ?? '' }, { session });
    if (commit.snapshot) {
      await c.snapshots.replaceOne({ _id: sessionId }, { version: commit.snapshot.version, state: commit.snapshot.state, updated_at: commit.snapshot.updatedAt }, { session, upsert: true });
    }
    if (commit.record) await c.sessions.replaceOne({ _id: sessionId }, sessionDocOf(commit.record.record, commit.record.json), { session, upsert: true });
  }
}

/** Sorted, de-duplicated seqs as [from, to] runs of consecutive numbers. */
export function contiguousRuns(seqs: readonly number[]): [number, number][] {
  const sorted = [...new Set(seqs)].sort((a, b) => a - b);
  const runs: [number, number][] = [];
  for (const seq of sorted) {
    const run = runs[runs.length - 1];
    if (run && seq === run[1] + 1) run[1] = seq;
    else runs.push([seq, seq]);
  }
  return runs;
}

const encodeOutboxCursor = (entry: Pick<OutboxDoc, 'order' | '_id'>): string => Buffer.from(JSON.stringify([entry.order, entry._id.toHexString()])).toString('base64url');

function decodeOutboxCursor(after: string | null | undefined): { order: number; id: ObjectId } | null {
  if (after === undefined || after === null || after === '') return null;
  try {
    const [order, id] = JSON.parse(Buffer.from(after, 'base64url').toString('utf8')) as [unknown, unknown];
    if (typeof order === 'number' && typeof id === 'string' && ObjectId.isValid(id)) return { order, id: new ObjectId(id) };
  } catch {
    // falls through to the refusal
  }
  throw new ValidationError('after is not an outbox cursor of this store', 'after');
}
