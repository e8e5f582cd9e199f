import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore } from '@berth/ports';
import { GridFSBucket, type Db, type ObjectId } from 'mongodb';
import { checkBlobKey } from '../shared/checks';
import { byteCounter } from './counting';

/**
 * Blobs in MongoDB's GridFS (bucket `blobs`), keyed by the blob key as the file `_id`. GridFS writes
 * the files document only after the last chunk, so a half-written blob is never found; a failed
 * upload is aborted, which removes its chunks. GridFS takes any BSON `_id`, the driver's types say
 * ObjectId: the key is cast.
 */
export class GridFsBlobStore implements BlobStore {
  private readonly bucket: GridFSBucket;

  constructor(db: Db) {
    this.bucket = new GridFSBucket(db, { bucketName: 'blobs' });
  }

  async put(key: string, content: AsyncIterable<Uint8Array>): Promise<{ size: number }> {
    const upload = this.bucket.openUploadStreamWithId(idOf(checkBlobKey(key)), key);
    const count = byteCounter();
    try {
      await pipeline(Readable.from(content, { objectMode: false }), count.stream, upload);
    } catch (error) {
      await upload.abort().catch(() => undefined);
      throw error;
    }
    return { size: count.size() };
  }

  async get(key: string): Promise<Readable | null> {
    const found = await this.bucket.find({ _id: idOf(checkBlobKey(key)) }, { limit: 1 }).toArray();
    return found.length === 0 ? null : this.bucket.openDownloadStream(idOf(key));
  }

  async delete(key: string): Promise<void> {
    try {
      await this.bucket.delete(idOf(checkBlobKey(key)));
    } catch (error) {
      if (!(error instanceof Error && /File not found/i.test(error.message))) throw error;
    }
  }
}

const idOf = (key: string): ObjectId => key as unknown as ObjectId;
