import type { SessionSnapshot, SessionSnapshots } from '@berth/ports';
import type { Collections } from './collections';
import { isDuplicateKey } from './errors';

export class MongoSnapshots implements SessionSnapshots {
  constructor(private readonly c: Collections) {}

  async load(sessionId: string): Promise<SessionSnapshot | null> {
    const doc = await this.c.snapshots.findOne({ _id: sessionId });
    return doc ? { sessionId: doc._id, version: doc.version, state: JSON.parse(doc.state), updatedAt: doc.updated_at } : null;
  }

  async save(snapshot: SessionSnapshot, expectedVersion: number): Promise<boolean> {
    const fields = { version: snapshot.version, state: JSON.stringify(snapshot.state), updated_at: snapshot.updatedAt };
    if (expectedVersion === 0) {
      try {
        await this.c.snapshots.insertOne({ _id: snapshot.sessionId, ...fields });
        return true;
      } catch (e) {
        if (isDuplicateKey(e)) return false;
        throw e;
      }
    }
    const moved = await this.c.snapshots.updateOne({ _id: snapshot.sessionId, version: expectedVersion }, { $set: fields });
    return moved.matchedCount === 1;
  }
}
