import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ArchiveRefused, workspaceEntryOf } from '@berth/contracts';
import { extract, pack } from 'tar-stream';

/** Everything put into a sandbox is owned by its user (uid/gid 1000, `agent`). */
const OWNER = { uid: 1000, gid: 1000 } as const;

/**
 * An archive's `workspace.tar` (untrusted) re-packed as what is put below the sandbox's
 * `/workspace`: each entry checked by `workspaceEntryOf`, owned by the sandbox user, without set-id
 * bits. A refusal, or bytes that are not a tar, fail the returned stream with a 400.
 */
export function repackWorkspace(content: AsyncIterable<Uint8Array>): Readable {
  const input = extract();
  const output = pack();
  const source = Readable.from(content);
  source.on('error', (error) => input.destroy(error));
  source.pipe(input);
  void (async () => {
    const symlinks = new Set<string>();
    for await (const entry of input) {
      const { header } = entry;
      const kept = workspaceEntryOf({ name: header.name, type: header.type ?? 'file', size: header.size ?? 0, mode: header.mode, linkname: header.linkname }, symlinks);
      const mtime = header.mtime ?? new Date(0);
      if (kept.kind === 'file') {
        await pipeline(entry as AsyncIterable<Uint8Array>, output.entry({ name: kept.name, size: kept.size, mode: kept.mode, mtime, ...OWNER }));
        continue;
      }
      entry.resume();
      if (kept.kind === 'directory') output.entry({ name: kept.name, type: 'directory', mode: kept.mode, mtime, ...OWNER });
      if (kept.kind === 'symlink') {
        symlinks.add(kept.name);
        output.entry({ name: kept.name, type: 'symlink', linkname: kept.target, mtime, ...OWNER });
      }
    }
    output.finalize();
  })().catch((error: unknown) => {
    output.destroy(error instanceof ArchiveRefused ? error : new ArchiveRefused('ARCHIVE_WORKSPACE_INVALID', `workspace.tar is not a tar archive (${error instanceof Error ? error.message : String(error)})`));
  });
  return Readable.from(output);
}
