import { ConcurrencyError, ValidationError } from '@berth/core';
import type { BerthStore } from '@berth/ports';
import { at, file } from './fixtures';

const bytesOf = async (stream: AsyncIterable<Uint8Array> | null): Promise<Buffer | null> => {
  if (stream === null) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
};

async function* chunks(parts: readonly (string | Error)[]): AsyncIterable<Uint8Array> {
  for (const part of parts) {
    if (part instanceof Error) throw part;
    yield Buffer.from(part);
  }
}

export function filesContract(store: () => BerthStore): void {
  describe('files', () => {
    it('stores, replaces and scopes file records to their owner', async () => {
      const { files } = store();
      await files.put(file({ id: 'file_1' }));
      await files.put(file({ id: 'file_1', filename: 'renamed.txt', size_bytes: 9 }));
      expect(await files.get('owner_a', 'file_1')).toMatchObject({ filename: 'renamed.txt', size_bytes: 9, deleted: false });
      expect(await files.get('owner_b', 'file_1')).toBeNull();
      await files.put(file({ id: 'file_1', owner_id: 'owner_b', filename: 'stolen.txt' }));
      expect((await files.get('owner_a', 'file_1'))?.filename).toBe('renamed.txt');
      expect(await files.get('owner_b', 'file_1')).toBeNull();
    });

    it('inserts a new id only: an id already stored, any owner’s or deleted, is a ConcurrencyError and changes nothing', async () => {
      const { files } = store();
      await files.insert(file({ id: 'file_1' }));
      await files.insert(file({ id: 'file_2' }));
      await files.markDeleted('owner_a', 'file_2');
      for (const again of [file({ id: 'file_1', filename: 'again.txt' }), file({ id: 'file_1', owner_id: 'owner_b' }), file({ id: 'file_2', filename: 'again.txt' })]) {
        await expect(files.insert(again)).rejects.toBeInstanceOf(ConcurrencyError);
      }
      expect(await files.get('owner_a', 'file_1')).toEqual(file({ id: 'file_1' }));
      expect(await files.get('owner_b', 'file_1')).toBeNull();
      expect(await files.get('owner_a', 'file_2')).toMatchObject({ filename: file({ id: 'file_2' }).filename, deleted: true });
    });

    it('lists newest first in keyset pages, filtered by scope and ids, never deleted ones', async () => {
      const { files } = store();
      for (let i = 1; i <= 5; i++) {
        await files.put(file({ id: `file_${i}`, created_at: at(i), scope: i % 2 === 0 ? { type: 'session', id: 'sesn_x' } : null }));
      }
      await files.put(file({ id: 'file_other', owner_id: 'owner_b', created_at: at(9) }));
      const first = await files.list('owner_a', { limit: 2 });
      expect(first.data.map((f) => f.id)).toEqual(['file_5', 'file_4']);
      const second = await files.list('owner_a', { limit: 2, page: first.next_page });
      expect(second.data.map((f) => f.id)).toEqual(['file_3', 'file_2']);
      const last = await files.list('owner_a', { limit: 2, page: second.next_page });
      expect(last.data.map((f) => f.id)).toEqual(['file_1']);
      expect(last.next_page).toBeNull();
      expect((await files.list('owner_a', { limit: 10, scope_id: 'sesn_x' })).data.map((f) => f.id)).toEqual(['file_4', 'file_2']);
      expect((await files.list('owner_a', { limit: 10, ids: ['file_3', 'file_1', 'file_3', 'file_other'] })).data.map((f) => f.id)).toEqual(['file_3', 'file_1']);
      expect((await files.list('owner_a', { limit: 10, order: 'asc' })).data.map((f) => f.id)).toEqual(['file_1', 'file_2', 'file_3', 'file_4', 'file_5']);
      await expect(files.list('owner_a', { limit: 10, ids: Array.from({ length: 101 }, (_, i) => `file_${i}`) })).rejects.toBeInstanceOf(ValidationError);

      expect(await files.markDeleted('owner_a', 'file_4')).toMatchObject({ id: 'file_4', deleted: false });
      expect((await files.list('owner_a', { limit: 10, scope_id: 'sesn_x' })).data.map((f) => f.id)).toEqual(['file_2']);
    });

    it('marks a file deleted once, for its owner only, and keeps the tombstone readable', async () => {
      const { files } = store();
      await files.put(file({ id: 'file_1' }));
      expect(await files.markDeleted('owner_b', 'file_1')).toBeNull();
      const [one, two] = await Promise.all([files.markDeleted('owner_a', 'file_1'), files.markDeleted('owner_a', 'file_1')]);
      expect([one, two].filter((r) => r !== null)).toHaveLength(1);
      expect(await files.get('owner_a', 'file_1')).toMatchObject({ id: 'file_1', deleted: true });
      expect(await files.markDeleted('owner_a', 'file_missing')).toBeNull();
      await files.put(file({ id: 'file_1', size_bytes: 42 }));
      expect(await files.get('owner_a', 'file_1')).toMatchObject({ size_bytes: 42, deleted: false });
    });
  });

  describe('blobs', () => {
    it('streams a blob in and out, and deletes it', async () => {
      const { blobs } = store();
      const big = 'x'.repeat(300_000);
      expect(await blobs.put('blob_a', chunks(['hello ', big, ' world']))).toEqual({ size: 300_012 });
      expect((await bytesOf(await blobs.get('blob_a')))?.toString()).toBe(`hello ${big} world`);
      expect(await blobs.put('blob_empty', chunks([]))).toEqual({ size: 0 });
      expect((await bytesOf(await blobs.get('blob_empty')))?.length).toBe(0);
      await blobs.delete('blob_a');
      await blobs.delete('blob_a');
      expect(await blobs.get('blob_a')).toBeNull();
    });

    it('leaves nothing behind when the source fails half-way, and never overwrites a key', async () => {
      const { blobs } = store();
      await expect(blobs.put('blob_cut', chunks(['partial', new Error('client went away')]))).rejects.toThrow('client went away');
      expect(await blobs.get('blob_cut')).toBeNull();
      await blobs.put('blob_cut', chunks(['whole']));
      expect((await bytesOf(await blobs.get('blob_cut')))?.toString()).toBe('whole');
      await expect(blobs.put('blob_cut', chunks(['again']))).rejects.toThrow();
      expect((await bytesOf(await blobs.get('blob_cut')))?.toString()).toBe('whole');
      await expect(blobs.put('../escape', chunks(['x']))).rejects.toBeInstanceOf(ValidationError);
    });
  });

  describe('session secrets', () => {
    const sealed = (n: number) => ({ key_id: `k${n}`, iv: `iv${n}`, ciphertext: `ct${n}`, tag: `tag${n}` });

    it('keeps sealed secrets per session and name as given, and deletes one or all of a session', async () => {
      const { secrets } = store();
      await secrets.put('sesn_1', 'sesrsc_a', sealed(1));
      await secrets.put('sesn_1', 'sesrsc_a', sealed(2));
      await secrets.put('sesn_1', 'sesrsc_b', sealed(3));
      await secrets.put('sesn_2', 'sesrsc_a', sealed(4));
      expect(await secrets.get('sesn_1', 'sesrsc_a')).toEqual(sealed(2));
      await secrets.delete('sesn_1', 'sesrsc_a');
      expect(await secrets.get('sesn_1', 'sesrsc_a')).toBeNull();
      expect(await secrets.get('sesn_1', 'sesrsc_b')).toEqual(sealed(3));
      await secrets.delete('sesn_1');
      expect(await secrets.get('sesn_1', 'sesrsc_b')).toBeNull();
      expect(await secrets.get('sesn_2', 'sesrsc_a')).toEqual(sealed(4));
    });
  });
}
