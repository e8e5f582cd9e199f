import type { TranscriptChunk, TranscriptMirror } from '@berth/ports';
import { ObjectId } from 'mongodb';
import { planChunk } from '../shared/checks';
import type { Collections } from './collections';
import { isDuplicateKey } from './errors';

export class MongoTranscripts implements TranscriptMirror {
  constructor(private readonly c: Collections) {}

  async append(chunk: TranscriptChunk): Promise<void> {
    const plan = planChunk(await this.size(chunk.session_id, chunk.path), chunk.offset, chunk.data, `${chunk.session_id}:${chunk.path}`);
    if (plan.kind === 'skip') return;
    try {
      await this.c.transcripts.insertOne({ _id: new ObjectId(), session_id: chunk.session_id, path: chunk.path, offset: plan.offset, bytes: plan.bytes, data: plan.data });
    } catch (e) {
      // A concurrent mirror of the same file stored this offset first: the mirror is idempotent.
      if (!isDuplicateKey(e)) throw e;
    }
  }

  async files(sessionId: string): Promise<readonly { path: string; data: string }[]> {
    const chunks = await this.c.transcripts.find({ session_id: sessionId }, { projection: { path: 1, data: 1 } }).sort({ path: 1, offset: 1 }).toArray();
    const files = new Map<string, string[]>();
    for (const chunk of chunks) files.set(chunk.path, [...(files.get(chunk.path) ?? []), chunk.data]);
    return [...files].map(([path, parts]) => ({ path, data: parts.join('') }));
  }

  async size(sessionId: string, path: string): Promise<number> {
    const last = await this.c.transcripts.findOne({ session_id: sessionId, path }, { sort: { offset: -1 }, projection: { offset: 1, bytes: 1 } });
    return last ? last.offset + last.bytes : 0;
  }
}
