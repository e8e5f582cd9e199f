import { ConcurrencyError } from '@berth/core';
import type { RecordedEvent } from '@berth/contracts';
import type { JournalQuery, SessionJournal } from '@berth/ports';
import { type Filter, ObjectId } from 'mongodb';
import { batchRange, gapError } from '../shared/checks';
import { checkLimit } from '../shared/paging';
import type { Collections, JournalDoc, JournalHeadDoc } from './collections';
import { isDuplicateKey } from './errors';
import { inSeqOrderPerSession } from './outbox-order';

const parse = (docs: readonly { body: string }[]): RecordedEvent[] => docs.map((d) => JSON.parse(d.body) as RecordedEvent);

/** How often an append re-reads the head after finding another writer's batch still pending. */
const SETTLE_ATTEMPTS = 3;

/**
 * The journal without multi-document transactions. An ordered insertMany is not atomic: a crash or
 * a conflict mid-batch would leave half a decision in the journal, visible to readers and to the
 * outbox. So the commit point is ONE document per session, `journal_heads/<session_id>`: an append
 * moves `last_seq` from `from - 1` to `to` with a compare-and-set that also stores the whole batch
 * as `pending`. That single-document write is atomic, and it is the only place a race is decided.
 * The events are then inserted into `journal` (idempotently: the unique (session_id, seq) index
 * drops repeats) and `pending` is cleared. Anyone who finds a head with `pending` (a writer that
 * crashed between the two steps) finishes the inserts itself before reading or appending, so a
 * committed batch is never lost and a lost race never leaves a partial batch. (So one decision's
 * events must fit in one 16 MB document; decisions are a handful of events.)
 */
export class MongoJournal implements SessionJournal {
  constructor(private readonly c: Collections) {}

  async appendEvents(sessionId: string, events: readonly RecordedEvent[]): Promise<void> {
    const range = batchRange(sessionId, events);
    if (!range) return;
    const docs: JournalDoc[] = events.map((e) => ({
      _id: new ObjectId(),
      session_id: sessionId,
      seq: e.seq,
      type: e.type,
      command_id: e.command_id,
      occurred_at: e.occurred_at,
      published: false,
      body: JSON.stringify(e),
    }));
    const pending = { batch: docs[0]?._id.toHexString() ?? '', docs };
    for (let attempt = 1; ; attempt++) {
      if (await this.commit(sessionId, range.from, range.to, pending)) break;
      const head = await this.c.heads.findOne({ _id: sessionId });
      const last = head?.last_seq ?? 0;
      if (range.from <= last) throw new ConcurrencyError(`session ${sessionId}: seq ${range.from} is already taken (last seq ${last})`);
      if (range.from > last + 1) throw gapError(sessionId, range.from, last);
      // The head is exactly where we expected but still carries a crashed writer's batch.
      if (head?.pending) await this.settle(sessionId, head.pending);
      if (attempt >= SETTLE_ATTEMPTS) throw new ConcurrencyError(`session ${sessionId}: journal head kept moving; retry`);
    }
    await this.settle(sessionId, pending);
  }

  async readEvents(sessionId: string, query: JournalQuery = {}): Promise<RecordedEvent[]> {
    await this.settlePending(sessionId);
    if (query.types && query.types.length === 0) return [];
    const seq: { $gt?: number; $lt?: number } = {};
    if (query.afterSeq !== undefined) seq.$gt = query.afterSeq;
    if (query.beforeSeq !== undefined) seq.$lt = query.beforeSeq;
    const filter: Filter<JournalDoc> = { session_id: sessionId };
    if (query.afterSeq !== undefined || query.beforeSeq !== undefined) filter.seq = seq;
    if (query.types) filter.type = { $in: [...query.types] };
    let cursor = this.c.journal.find(filter, { projection: { body: 1 } }).sort({ seq: query.order === 'desc' ? -1 : 1 });
    if (query.limit !== undefined) cursor = cursor.limit(checkLimit(query.limit));
    return parse(await cursor.toArray());
  }

  async lastSeq(sessionId: string): Promise<number> {
    return (await this.settlePending(sessionId))?.last_seq ?? 0;
  }

  async eventsOfCommand(sessionId: string, commandId: string): Promise<RecordedEvent[]> {
    await this.settlePending(sessionId);
    return parse(await this.c.journal.find({ session_id: sessionId, command_id: commandId }, { projection: { body: 1 } }).sort({ seq: 1 }).toArray());
  }

  async unpublished(limit: number): Promise<RecordedEvent[]> {
    checkLimit(limit);
    // Batches of crashed writers are committed: finish them so the relay publishes them too.
    for (const head of await this.c.heads.find({ 'pending.batch': { $exists: true } }).limit(100).toArray()) {
      if (head.pending) await this.settle(head._id, head.pending);
    }
    const docs = await this.c.journal.find({ published: false }, { projection: { session_id: 1, seq: 1, body: 1 } }).sort({ _id: 1 }).limit(limit).toArray();
    return parse(inSeqOrderPerSession(docs));
  }

  async markPublished(sessionId: string, seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return;
    await this.c.journal.updateMany({ session_id: sessionId, seq: { $in: [...seqs] }, published: false }, { $set: { published: true } });
  }

  /** The atomic commit: true when the head moved to `to`, false when it was not at `from - 1`. */
  private async commit(sessionId: string, from: number, to: number, pending: NonNullable<JournalHeadDoc['pending']>): Promise<boolean> {
    if (from === 1) {
      try {
        await this.c.heads.insertOne({ _id: sessionId, last_seq: to, pending });
        return true;
      } catch (e) {
        if (isDuplicateKey(e)) return false;
        throw e;
      }
    }
    const moved = await this.c.heads.updateOne({ _id: sessionId, last_seq: from - 1, pending: { $exists: false } }, { $set: { last_seq: to, pending } });
    return moved.matchedCount === 1;
  }

  /** Inserts a committed batch's events (repeats are dropped by the unique index) and clears it. */
  private async settle(sessionId: string, pending: NonNullable<JournalHeadDoc['pending']>): Promise<void> {
    try {
      await this.c.journal.insertMany(pending.docs, { ordered: false });
    } catch (e) {
      if (!isDuplicateKey(e)) throw e;
    }
    await this.c.heads.updateOne({ _id: sessionId, 'pending.batch': pending.batch }, { $unset: { pending: '' } });
  }

  private async settlePending(sessionId: string): Promise<JournalHeadDoc | null> {
    const head = await this.c.heads.findOne({ _id: sessionId });
    if (head?.pending) await this.settle(sessionId, head.pending);
    return head;
  }
}

