import { Readable } from 'node:stream';
import { extract, pack, type Header } from 'tar-stream';

/** One tar entry as a test writes or reads it. */
export type TarEntry = Readonly<{ name: string; body?: Buffer | string; type?: Header['type']; linkname?: string; mode?: number; uid?: number; gid?: number }>;

/** A tar of these entries, in order. */
export async function packTar(entries: readonly TarEntry[]): Promise<Buffer> {
  const archive = pack();
  const chunks: Buffer[] = [];
  archive.on('data', (c: unknown) => void chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    archive.on('end', resolve);
    archive.on('error', reject);
  });
  for (const e of entries) {
    const body = e.body === undefined ? undefined : Buffer.from(e.body);
    await new Promise<void>((resolve, reject) =>
      archive.entry({ name: e.name, type: e.type ?? 'file', mode: e.mode ?? 0o644, linkname: e.linkname, uid: e.uid, gid: e.gid, size: body?.length ?? 0 }, body ?? Buffer.alloc(0), (err) => (err ? reject(err) : resolve())),
    );
  }
  archive.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** Every entry of a tar with its header fields and bytes. */
export async function unpackTar(bytes: Buffer | Readable): Promise<(TarEntry & { body: Buffer })[]> {
  const reader = extract();
  (Buffer.isBuffer(bytes) ? Readable.from([bytes]) : bytes).pipe(reader);
  const entries: (TarEntry & { body: Buffer })[] = [];
  for await (const entry of reader) {
    const chunks: Buffer[] = [];
    for await (const c of entry) chunks.push(c as Buffer);
    const h = entry.header;
    entries.push({ name: h.name, type: h.type ?? 'file', linkname: h.linkname ?? undefined, mode: h.mode, uid: h.uid, gid: h.gid, body: Buffer.concat(chunks) });
  }
  return entries;
}
