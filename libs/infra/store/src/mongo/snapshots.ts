import type { SessionSnapshot, SessionSnapshots } from '@berth/ports';
import { PRIMARY, type MongoContext } from './context';

/** Written by MongoJournal.commit only. */
export class MongoSnapshots implements SessionSnapshots {
  constructor(private readonly m: MongoContext) {}

  async load(sessionId: string): Promise<SessionSnapshot | null> {
    const doc = await this.m.c.snapshots.findOne({ _id: sessionId }, PRIMARY);
    return doc ? { sessionId: doc._id, version: doc.version, state: JSON.parse(doc.state), updatedAt: doc.updated_at } : null;
  }
}
