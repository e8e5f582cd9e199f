import { Readable } from 'node:stream';
import { pack } from 'tar-stream';
import { WORKSPACE_OWNER } from './workspace-ids';

/**
 * The directories a session's `/mnt/session` needs, owned by the sandbox user, as an archive for
 * `putArchive(sandbox, '/mnt/session', …)`: the engine extracts it as itself, so it works where the
 * sandbox (no capabilities) could not chown, and on a fresh volume whose root the engine owns.
 */
export function sessionLayoutArchive(): Readable {
  const archive = pack();
  for (const name of ['uploads', 'outputs']) {
    archive.entry({ name, type: 'directory', mode: 0o755, uid: WORKSPACE_OWNER.uid, gid: WORKSPACE_OWNER.gid, mtime: new Date() });
  }
  archive.finalize();
  return Readable.from(archive);
}
