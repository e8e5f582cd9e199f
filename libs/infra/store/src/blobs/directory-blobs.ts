import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { link, mkdir, open, rm, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isCode, ValidationError } from '@berth/core';
import type { BlobStore } from '@berth/ports';
import { checkBlobKey } from '../shared/checks';
import { byteCounter } from './counting';


/**
 * The embedded blob store: one file per blob under `root` (sharded by a hash of the key into 256
 * directories). A put streams into `root/.partial/`, fsyncs, then hard-links the finished file into
 * place: a reader never sees half a blob, an existing key is never overwritten, and a crash leaves
 * at worst a partial file that the next `init` removes.
 */
export class DirectoryBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  /** Creates the directories and drops partial writes a crash left behind. */
  async init(): Promise<void> {
    await rm(join(this.root, '.partial'), { recursive: true, force: true });
    await mkdir(join(this.root, '.partial'), { recursive: true });
  }

  async put(key: string, content: AsyncIterable<Uint8Array>): Promise<{ size: number }> {
    const target = this.pathOf(checkBlobKey(key));
    const partial = join(this.root, '.partial', `${key}.${randomBytes(6).toString('hex')}`);
    const count = byteCounter();
    try {
      await mkdir(join(this.root, '.partial'), { recursive: true });
      await pipeline(Readable.from(content, { objectMode: false }), count.stream, createWriteStream(partial, { flags: 'wx' }));
      const handle = await open(partial, 'r');
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
      await mkdir(join(target, '..'), { recursive: true });
      await link(partial, target).catch((e: unknown) => {
        throw isCode(e, 'EEXIST') ? new ValidationError(`blob ${key} already exists`, 'key') : e;
      });
      return { size: count.size() };
    } finally {
      await unlink(partial).catch(() => undefined);
    }
  }

  async get(key: string): Promise<Readable | null> {
    const path = this.pathOf(checkBlobKey(key));
    const handle = await open(path, 'r').catch((e: unknown) => {
      if (isCode(e, 'ENOENT')) return null;
      throw e;
    });
    if (handle === null) return null;
    return handle.createReadStream();
  }

  async delete(key: string): Promise<void> {
    await rm(this.pathOf(checkBlobKey(key)), { force: true });
  }

  private pathOf(key: string): string {
    return join(this.root, createHash('sha256').update(key).digest('hex').slice(0, 2), key);
  }
}
