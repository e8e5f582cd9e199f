import { execFile } from 'node:child_process';
import type { BigIntStats } from 'node:fs';
import { chmod, copyFile, lchown, link, lstat, lutimes, mkdir, readdir, readFile, readlink, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KeyedLock, SAFE_TOKEN, ValidationError } from '@berth/core';
import type { SnapshotRetention, TakenSnapshot, WorkspaceSnapshots } from '@berth/ports';
import type { LoopWorkspaces } from './loop-workspaces';

const run = promisify(execFile);

/** The two trees of a workspace image that sandboxes see (`/workspace`, `/mnt/session`). */
const TREES = ['workspace', 'session'] as const;
/** Written into a fork's image root (no sandbox sees it) once its snapshot is copied in. */
const SEEDED_MARK = '.berth-seeded';

type Entry = Readonly<{ turn_id: string; bytes: number; files: number }>;
/** `usage`: bytes the session's snapshots hold on disk together (a file shared by several counts once). */
type Index = Readonly<{ snapshots: readonly Entry[]; usage: number }>;

const token = (value: string, what: string): string => {
  if (!SAFE_TOKEN.test(value)) throw new ValidationError(`not a ${what}: ${value}`, what);
  return value;
};

/**
 * Per-turn snapshots of `loop` workspaces as hard-link trees on the host, beside the images:
 * `<root>/snapshots/<session>/<turn>/{workspace,session}`. A file unchanged since the previous
 * snapshot (same size, mtime, mode, owner) is a hard link to it; a changed one is copied. So a
 * snapshot costs the bytes the turn changed plus one directory entry per file, and each snapshot
 * is a whole tree (dropping the oldest never breaks a newer one).
 *
 * The sandbox's files are hostile: while the tree is read its filesystem is frozen (`fsfreeze`),
 * so nothing in the sandbox can swap a checked directory for a symlink under the walk; the walk
 * never follows a symlink (it copies the link), and skips devices, sockets and fifos.
 */
export class LoopWorkspaceSnapshots implements WorkspaceSnapshots {
  readonly supported = true;
  private readonly lock = new KeyedLock();

  constructor(
    private readonly root: string,
    private readonly workspaces: LoopWorkspaces,
  ) {}

  async take(sessionId: string, turnId: string, retention: SnapshotRetention): Promise<TakenSnapshot | null> {
    if (retention.keep <= 0) return null;
    const mount = await this.workspaces.hostRoot(sessionId);
    if (mount === null) return null;
    const dir = this.sessionDir(sessionId);
    const target = join(dir, token(turnId, 'turn id'));
    return this.lock.run(sessionId, async () => {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      const index = await this.readIndex(dir);
      const previous = index.snapshots.filter((s) => s.turn_id !== turnId).at(-1);
      const partial = `${target}.partial`;
      await rm(partial, { recursive: true, force: true });
      await mkdir(partial, { mode: 0o700 });
      const counts = { bytes: 0, files: 0 };
      await freezing(mount, async () => {
        for (const tree of TREES) await copyTree(join(mount, tree), join(partial, tree), previous ? join(dir, previous.turn_id, tree) : null, counts);
      });
      await rm(target, { recursive: true, force: true });
      await rename(partial, target);
      const kept = [...index.snapshots.filter((s) => s.turn_id !== turnId), { turn_id: turnId, ...counts }];
      let usage = index.usage + counts.bytes;
      const dropped: string[] = [];
      // The newest snapshot always stays: it is the one just asked for.
      while (kept.length > 1 && (kept.length > retention.keep || usage > retention.maxBytes)) {
        const oldest = kept.shift() as Entry;
        usage -= await removeTree(join(dir, oldest.turn_id));
        dropped.push(oldest.turn_id);
      }
      await this.writeIndex(dir, { snapshots: kept, usage });
      return { ...counts, dropped_turn_ids: dropped };
    });
  }

  async seed(sessionId: string, from: Readonly<{ session_id: string; turn_id: string }>, limitBytes: number): Promise<void> {
    const snapshot = join(this.sessionDir(from.session_id), token(from.turn_id, 'turn id'));
    await this.workspaces.forSession(sessionId, limitBytes);
    const mount = await this.workspaces.hostRoot(sessionId);
    if (mount === null) throw new Error(`the workspace of ${sessionId} is not mounted`);
    if (await exists(join(mount, SEEDED_MARK))) return;
    await this.lock.run(from.session_id, async () => {
      if (!(await exists(snapshot))) {
        throw new Error(`the workspace snapshot of ${from.session_id} at turn ${from.turn_id} is gone (removed by its environment's workspace_snapshots retention, or with its session)`);
      }
      // The snapshot is Berth's own tree (nothing in a sandbox can change it): cp -a copies links as links and keeps owners and times.
      for (const tree of TREES) await run('cp', ['-a', '--', `${join(snapshot, tree)}/.`, `${join(mount, tree)}/`]);
    });
    await writeFile(join(mount, SEEDED_MARK), `${from.session_id} ${from.turn_id}\n`, { mode: 0o600 });
  }

  async removeSession(sessionId: string): Promise<void> {
    await this.lock.run(sessionId, () => rm(this.sessionDir(sessionId), { recursive: true, force: true }));
  }

  private sessionDir = (sessionId: string): string => join(this.root, 'snapshots', token(sessionId, 'session id'));

  private async readIndex(dir: string): Promise<Index> {
    try {
      return JSON.parse(await readFile(join(dir, 'index.json'), 'utf8')) as Index;
    } catch {
      return { snapshots: [], usage: 0 };
    }
  }

  private async writeIndex(dir: string, index: Index): Promise<void> {
    const path = join(dir, 'index.json');
    await writeFile(`${path}.tmp`, JSON.stringify(index), { mode: 0o600 });
    await rename(`${path}.tmp`, path);
  }
}

/** Runs `work` with the filesystem mounted at `mount` frozen (writes in the sandbox wait meanwhile). */
async function freezing<T>(mount: string, work: () => Promise<T>): Promise<T> {
  await run('fsfreeze', ['--freeze', mount]);
  try {
    return await work();
  } finally {
    await run('fsfreeze', ['--unfreeze', mount]);
  }
}

/** A copy's mtime is set through a float of seconds (below a microsecond off), so within a millisecond is the same time. */
const sameTime = (a: bigint, b: bigint): boolean => (a > b ? a - b : b - a) < 1_000_000n;
const sameFile = (a: BigIntStats, b: BigIntStats): boolean =>
  b.isFile() && a.size === b.size && sameTime(a.mtimeNs, b.mtimeNs) && a.mode === b.mode && a.uid === b.uid && a.gid === b.gid;

/**
 * Copies the tree at `from` to `to` (which must not exist), linking files unchanged since `previous`.
 * Entries are read with lstat and never followed; ownership, modes and times are kept.
 */
async function copyTree(from: string, to: string, previous: string | null, counts: { bytes: number; files: number }): Promise<void> {
  const top = await lstat(from, { bigint: true }).catch(() => null);
  if (top === null || !top.isDirectory()) return;
  await mkdir(to);
  for (const entry of await readdir(from)) {
    const source = join(from, entry);
    const target = join(to, entry);
    const st = await lstat(source, { bigint: true });
    if (st.isDirectory()) {
      await copyTree(source, target, previous === null ? null : join(previous, entry), counts);
    } else if (st.isFile()) {
      const before = previous === null ? null : await lstat(join(previous, entry), { bigint: true }).catch(() => null);
      counts.files += 1;
      if (before !== null && sameFile(st, before)) {
        await link(join(previous as string, entry), target);
        continue;
      }
      await copyFile(source, target);
      counts.bytes += Number(st.size);
      await keepAttributes(target, st);
    } else if (st.isSymbolicLink()) {
      await symlink(await readlink(source), target);
      await lchown(target, Number(st.uid), Number(st.gid));
    }
  }
  await keepAttributes(to, top);
}

async function keepAttributes(path: string, st: BigIntStats): Promise<void> {
  await lchown(path, Number(st.uid), Number(st.gid));
  await chmod(path, Number(st.mode & 0o7777n));
  await lutimes(path, Number(st.atimeNs) / 1e9, Number(st.mtimeNs) / 1e9);
}

/** Removes a snapshot tree; returns the bytes freed (files no other snapshot links). */
async function removeTree(dir: string): Promise<number> {
  let freed = 0;
  const walk = async (path: string): Promise<void> => {
    for (const entry of await readdir(path).catch(() => [] as string[])) {
      const child = join(path, entry);
      const st = await lstat(child);
      if (st.isDirectory()) await walk(child);
      else if (st.isFile() && st.nlink === 1) freed += st.size;
    }
  };
  await walk(dir);
  await rm(dir, { recursive: true, force: true });
  return freed;
}

const exists = (path: string): Promise<boolean> =>
  lstat(path).then(
    () => true,
    () => false,
  );
