import { Readable } from 'node:stream';
import { isSafeToken, ValidationError } from '@berth/core';
import type { BlobStore } from '@berth/ports';

/** Blobs as Buffers; a put becomes visible only once its whole source was read. */
export class MemoryBlobs implements BlobStore {
  private readonly blobs = new Map<string, Buffer>();

  async put(key: string, content: AsyncIterable<Uint8Array>): Promise<{ size: number }> {
    if (!isSafeToken(key)) throw new ValidationError("blob key must be 1-128 letters, digits, '_' or '-'", 'key');
    if (this.blobs.has(key)) throw new ValidationError(`blob ${key} already exists`, 'key');
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(Buffer.from(chunk));
    if (this.blobs.has(key)) throw new ValidationError(`blob ${key} already exists`, 'key');
    const data = Buffer.concat(chunks);
    this.blobs.set(key, data);
    return { size: data.length };
  }

  async get(key: string): Promise<Readable | null> {
    const data = this.blobs.get(key);
    return data === undefined ? null : Readable.from([data]);
  }

  async delete(key: string): Promise<void> {
    this.blobs.delete(key);
  }
}
