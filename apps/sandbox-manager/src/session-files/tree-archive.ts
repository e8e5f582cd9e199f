import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { Readable } from 'node:stream';
import { pack, type Pack } from 'tar-stream';

/** Everything a sandbox receives is owned by its user (uid/gid 1000, `agent`). */
const OWNER = { uid: 1000, gid: 1000 } as const;

/** The parent directories of `relative` (`a/b/c` → `a`, `a/b`), so an extraction creates them owned by the sandbox user. */
const parentsOf = (relative: string): string[] => {
  const parts = relative.split('/').slice(0, -1);
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
};

function directory(archive: Pack, name: string, mode = 0o755): void {
  archive.entry({ name, type: 'directory', mode, ...OWNER, mtime: new Date() });
}

/**
 * One file as an archive entry at `relative` (below the directory it is extracted into), with its
 * parent directories, streamed from `content` (never held in memory).
 */
export function fileArchive(relative: string, size: number, content: Readable): Readable {
  const archive = pack();
  void (async () => {
    for (const dir of parentsOf(relative)) directory(archive, dir);
    const entry = archive.entry({ name: relative, size, mode: 0o644, ...OWNER, mtime: new Date() }, (error) => {
      if (error) archive.destroy(error);
      else archive.finalize();
    });
    content.on('error', (e) => archive.destroy(e));
    content.pipe(entry);
  })();
  return Readable.from(archive);
}

/**
 * A host directory tree as an archive rooted at `relative` (regular files, directories and
 * symlinks, modes kept, owners set to the sandbox user), walked and read lazily.
 */
export function treeArchive(root: string, relative: string): Readable {
  const archive = pack();
  const walk = async (dir: string, name: string): Promise<void> => {
    for (const child of (await readdir(dir)).sort()) {
      const path = join(dir, child);
      const entryName = posix.join(name, child);
      const stat = await lstat(path);
      if (stat.isDirectory()) {
        directory(archive, entryName, stat.mode & 0o7777);
        await walk(path, entryName);
      } else if (stat.isSymbolicLink()) {
        archive.entry({ name: entryName, type: 'symlink', linkname: await readlink(path), ...OWNER, mtime: stat.mtime });
      } else if (stat.isFile()) {
        await new Promise<void>((resolve, reject) => {
          const entry = archive.entry({ name: entryName, size: stat.size, mode: stat.mode & 0o7777, ...OWNER, mtime: stat.mtime }, (e) => (e ? reject(e) : resolve()));
          const source = createReadStream(path);
          source.on('error', reject);
          source.pipe(entry);
        });
      }
    }
  };
  void (async () => {
    for (const dir of [...parentsOf(relative), relative]) directory(archive, dir);
    await walk(root, relative);
    archive.finalize();
  })().catch((e: unknown) => archive.destroy(e instanceof Error ? e : new Error(String(e))));
  return Readable.from(archive);
}
