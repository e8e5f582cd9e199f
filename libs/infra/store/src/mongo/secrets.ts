import type { SealedSecret } from '@berth/contracts';
import type { SessionSecrets } from '@berth/ports';
import type { Collections } from './collections';

/** Sealed session secrets, one document each (a document of an earlier plaintext release, with `value`, is not read). */
export class MongoSecrets implements SessionSecrets {
  constructor(private readonly c: Collections) {}

  async put(sessionId: string, name: string, sealed: SealedSecret): Promise<void> {
    const secret = { key_id: sealed.key_id, iv: sealed.iv, ciphertext: sealed.ciphertext, tag: sealed.tag };
    await this.c.secrets.updateOne({ _id: `${sessionId}:${name}` }, { $set: { session_id: sessionId, name, secret }, $unset: { value: '' } }, { upsert: true });
  }

  async get(sessionId: string, name: string): Promise<SealedSecret | null> {
    return (await this.c.secrets.findOne({ _id: `${sessionId}:${name}` }))?.secret ?? null;
  }

  async delete(sessionId: string, name?: string): Promise<void> {
    if (name === undefined) await this.c.secrets.deleteMany({ session_id: sessionId });
    else await this.c.secrets.deleteOne({ _id: `${sessionId}:${name}` });
  }
}
