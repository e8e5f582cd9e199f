import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdir, readdir, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import { join, resolve } from 'node:path';
import { isCode } from '@berth/core';
import type { ImageBuildGrant } from '@berth/ports';

/** The label naming a container's egress directory (its id under the egress root). */
export const EGRESS_DIR_LABEL = 'berth.egress-dir';
/** The label carrying the loopback port its relay listens on. */
export const EGRESS_PORT_LABEL = 'berth.egress-port';
/** Subdirectory mounted into the sandbox: only the proxy's socket is in it. */
export const EGRESS_SOCKET_SUBDIR = 'socket';
/** The proxy's socket in it (mirrors EGRESS_SOCKET_FILE in @berth/sandbox-domain: infra may not import domain code). */
const SOCKET_FILE = 'egress.sock';
/** File beside it with the container's current name, which the egress reads its identity from. */
export const EGRESS_NAME_FILE = 'name';
/** Beside it for an image build only: what the build may reach (`ImageBuildGrant` as JSON); its presence makes the directory a build's. */
export const EGRESS_BUILD_GRANT_FILE = 'build.json';
/** The egress appends each refusal of a build here (JSON lines), so the build's error can quote the egress's words. */
export const EGRESS_BUILD_DENIALS_FILE = 'denied.jsonl';

const DIR_ID = /^[0-9a-f]{16}$/;
/** A removed directory on its way out: not a sandbox's (the egress serves `DIR_ID` names only). */
const GONE_PREFIX = '.gone-';
/** A directory being made, renamed to its id once whole. */
const NEW_PREFIX = '.new-';
/** A staged directory older than this is a leftover of a manager that died while making it. */
const STAGED_GRACE_MS = 60_000;

// A unix socket path is at most 107 bytes: <root>/<16 hex>/socket/egress.sock must fit.
const SOCKET_PATH_TAIL = 1 + 16 + 1 + EGRESS_SOCKET_SUBDIR.length + 1 + SOCKET_FILE.length;
const MAX_SOCKET_PATH = 107;

/**
 * One directory per sandbox under the egress root, made by the runtime before the container is
 * created (the bind needs its source) and removed with the container:
 *
 *     <root>/<id>/name            the container's current name (rewritten when a claim renames it)
 *     <root>/<id>/socket/         bind-mounted read-only into the sandbox; the egress proxy listens
 *                                 on socket/egress.sock, and recreates it there after a restart
 *
 * The sandbox sees only `socket/`; it cannot write there, nor see or change `name`. The id is a
 * hash of the name the container was created with, short enough for the socket path limit.
 */
export class EgressDirectories {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
    if (this.root.length + SOCKET_PATH_TAIL > MAX_SOCKET_PATH) {
      throw new Error(`the egress directory ${this.root} is too long for a unix socket path under it (at most ${MAX_SOCKET_PATH - SOCKET_PATH_TAIL} characters)`);
    }
  }

  idFor(createdName: string): string {
    return createHash('sha256').update(createdName).digest('hex').slice(0, 16);
  }

  socketDir(id: string): string {
    return join(this.root, id, EGRESS_SOCKET_SUBDIR);
  }

  /** Where the egress listens for this directory's sandbox. */
  socketPath(id: string): string {
    return join(this.socketDir(id), SOCKET_FILE);
  }

  /** Makes (or keeps) the directory of a container about to be created; returns its id. */
  prepare(createdName: string): Promise<string> {
    return this.make(createdName, {});
  }

  /**
   * Makes the directory of an image build's container: its grant is written before the container
   * exists, so the egress never serves the build without it.
   */
  prepareBuild(createdName: string, grant: ImageBuildGrant): Promise<string> {
    const granted = JSON.stringify({ environment_id: grant.environmentId, ecosystems: grant.ecosystems, allowed_hosts: grant.allowedHosts });
    return this.make(createdName, { [EGRESS_BUILD_GRANT_FILE]: granted });
  }

  /**
   * The directory appears whole, in one rename: the egress, which watches the root, would
   * otherwise find `<id>` before its `socket/` (and a build's before its grant) and wait for its
   * next rescan. A directory already there (the same container prepared again) is kept, with its
   * name rewritten.
   */
  private async make(createdName: string, files: Readonly<Record<string, string>>): Promise<string> {
    const id = this.idFor(createdName);
    const staged = join(this.root, `${NEW_PREFIX}${id}-${randomBytes(4).toString('hex')}`);
    await mkdir(join(staged, EGRESS_SOCKET_SUBDIR), { recursive: true, mode: 0o755 });
    for (const [file, content] of Object.entries({ ...files, [EGRESS_NAME_FILE]: createdName })) await writeFile(join(staged, file), content, { mode: 0o644 });
    try {
      await rename(staged, join(this.root, id));
    } catch (error) {
      await rm(staged, { recursive: true, force: true });
      if (!isCode(error, 'ENOTEMPTY') && !isCode(error, 'EEXIST')) throw error;
      for (const [file, content] of Object.entries(files)) await replaceFile(join(this.root, id, file), content);
      await this.rename(id, createdName);
    }
    return id;
  }

  /** The egress's refusals of a build so far (its words), oldest first. */
  async buildDenials(id: string): Promise<string[]> {
    let text: string;
    try {
      text = await readFile(join(this.root, id, EGRESS_BUILD_DENIALS_FILE), 'utf8');
    } catch {
      return [];
    }
    return text.split('\n').flatMap((line) => {
      try {
        const message = (JSON.parse(line) as { message?: unknown }).message;
        return typeof message === 'string' ? [message] : [];
      } catch {
        return [];
      }
    });
  }

  /** Records the container's new name (a warm-pool claim renamed it for its session). */
  rename(id: string, name: string): Promise<void> {
    return replaceFile(join(this.root, id, EGRESS_NAME_FILE), name);
  }

  /**
   * Takes the directory away in one step (a rename the egress sees as its end, so it stops
   * serving and never makes a socket in it again), then deletes it. Best effort: a directory left
   * behind is pruned at the next start, and never fails the container's removal.
   */
  async remove(id: string): Promise<void> {
    if (!DIR_ID.test(id)) return;
    const gone = join(this.root, `${GONE_PREFIX}${id}-${randomBytes(4).toString('hex')}`);
    try {
      await rename(join(this.root, id), gone);
    } catch {
      return;
    }
    await rm(gone, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }).catch(() => undefined);
  }

  /**
   * Removes the directories of containers that no longer exist (and leftovers of removals); returns
   * how many. With `olderThanMs`, a directory changed more recently is kept: another sandbox-manager
   * on this host may have made it for a container it is about to create.
   */
  async prune(liveIds: ReadonlySet<string>, olderThanMs = 0): Promise<number> {
    let entries: string[];
    try {
      entries = await readdir(this.root);
    } catch {
      return 0;
    }
    const cutoff = Date.now() - olderThanMs;
    const unused = entries.filter((id) => DIR_ID.test(id) && !liveIds.has(id));
    const ages = await Promise.all(unused.map((id) => stat(join(this.root, id)).then((s) => s.mtimeMs, () => 0)));
    const stale = unused.filter((_, i) => olderThanMs === 0 || (ages[i] as number) < cutoff);
    await Promise.all(stale.map((id) => this.remove(id)));
    // A staged directory is another manager's prepare in flight unless it is old.
    const staged = entries.filter((name) => name.startsWith(NEW_PREFIX));
    const stagedAges = await Promise.all(staged.map((name) => stat(join(this.root, name)).then((s) => s.mtimeMs, () => 0)));
    const leftovers = [...entries.filter((name) => name.startsWith(GONE_PREFIX)), ...staged.filter((_, i) => (stagedAges[i] as number) < Date.now() - STAGED_GRACE_MS)];
    await Promise.all(leftovers.map((name) => rm(join(this.root, name), { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }).catch(() => undefined)));
    return stale.length;
  }

  /** A path inside the egress root (never bindable from a spec: only the runtime mounts these). */
  contains(path: string): boolean {
    const p = resolve(path);
    return p === this.root || p.startsWith(`${this.root}/`);
  }
}

/**
 * Listens on `path` in a sandbox's socket directory for the sandbox user: a socket left there by
 * an earlier process (nobody listens on it any more) is replaced, and uid 1000 may connect
 * (connecting to a unix socket needs write permission on it).
 */
export async function listenForSandbox(server: Server, path: string): Promise<void> {
  await unlink(path).catch(() => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await chmod(path, 0o666);
}

/** Replaces a file in one rename, so a reader sees the old content or the new, never a part. */
async function replaceFile(file: string, content: string): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, content, { mode: 0o644 });
  await rename(temp, file);
}
