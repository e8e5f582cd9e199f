import type { SessionSecrets } from '@berth/ports';
import type { Collections } from './collections';

export class MongoSecrets implements SessionSecrets {
  constructor(private readonly c: Collections) {}

  async put(sessionId: string, name: string, value: string): Promise<void> {
    await this.c.secrets.updateOne({ _id: `${sessionId}:${name}` }, { $set: { session_id: sessionId, name, value } }, { upsert: true });
  }

  async get(sessionId: string, name: string): Promise<string | null> {
    return (await this.c.secrets.findOne({ _id: `${sessionId}:${name}` }))?.value ?? null;
  }

  async delete(sessionId: string, name?: string): Promise<void> {
    if (name === undefined) await this.c.secrets.deleteMany({ session_id: sessionId });
    else await this.c.secrets.deleteOne({ _id: `${sessionId}:${name}` });
  }
}
