import type { TranscriptChunk, TranscriptMirror } from '@berth/ports';
import { ObjectId, type ClientSession } from 'mongodb';
import { planTranscriptAppend } from '../shared/transcripts';
import { UNIQUE_KEYS, Unique } from './collections';
import { PRIMARY, type MongoContext } from './context';
import { isDuplicateOn } from './errors';

/** A concurrent mirror of the same file stored a piece at our offset first: plan the append again. */
class PieceTaken extends Error {}

/**
 * A mirrored file is pieces of at most StoreLimits.transcriptPieceBytes, unique on
 * (session, path, offset), so a transcript of any size fits. An append's pieces are inserted in one
 * transaction: a file never ends inside an append (a harness would read half a JSON line).
 */
export class MongoTranscripts implements TranscriptMirror {
  constructor(private readonly m: MongoContext) {}

  async append(chunk: TranscriptChunk): Promise<void> {
    await this.m.transaction(
      async (session) => {
        const plan = planTranscriptAppend(await this.sizeOf(chunk.session_id, chunk.path, session), chunk);
        if (plan.kind === 'skip') return;
        const docs = plan.pieces.map((p) => ({ _id: new ObjectId(), session_id: chunk.session_id, path: chunk.path, offset: p.offset, bytes: p.bytes, data: p.data }));
        try {
          await this.m.c.transcripts.insertMany(docs, { session, ordered: true });
        } catch (e) {
          if (isDuplicateOn(e, Unique.transcriptPiece.name, UNIQUE_KEYS)) throw new PieceTaken(`${chunk.session_id}:${chunk.path}: offset taken meanwhile`);
          throw e;
        }
      },
      (e) => e instanceof PieceTaken,
    );
  }

  async files(sessionId: string): Promise<readonly { path: string; data: string }[]> {
    const pieces = await this.m.c.transcripts.find({ session_id: sessionId }, { ...PRIMARY, projection: { path: 1, data: 1 } }).sort({ path: 1, offset: 1 }).toArray();
    const files = new Map<string, string[]>();
    for (const piece of pieces) {
      const parts = files.get(piece.path);
      if (parts) parts.push(piece.data);
      else files.set(piece.path, [piece.data]);
    }
    return [...files].map(([path, parts]) => ({ path, data: parts.join('') }));
  }

  async size(sessionId: string, path: string): Promise<number> {
    return this.sizeOf(sessionId, path);
  }

  async sizes(sessionId: string): Promise<readonly { path: string; bytes: number }[]> {
    const rows = await this.m.c.transcripts
      .aggregate<{ _id: string; bytes: number }>([{ $match: { session_id: sessionId } }, { $group: { _id: '$path', bytes: { $max: { $add: ['$offset', '$bytes'] } } } }, { $sort: { _id: 1 } }], PRIMARY)
      .toArray();
    return rows.map((r) => ({ path: r._id, bytes: r.bytes }));
  }

  private async sizeOf(sessionId: string, path: string, session?: ClientSession): Promise<number> {
    const last = await this.m.c.transcripts.findOne({ session_id: sessionId, path }, { ...(session ? { session } : PRIMARY), sort: { offset: -1 }, projection: { offset: 1, bytes: 1 } });
    return last ? last.offset + last.bytes : 0;
  }
}
