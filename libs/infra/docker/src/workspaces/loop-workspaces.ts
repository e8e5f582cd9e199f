import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chown, link, mkdir, open, readFile, readdir, readlink, rm, rmdir, stat, symlink, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isCode, KeyedLock, ValidationError } from '@berth/core';
import type { SessionWorkspaces, SpareWorkspace, Workspace } from '@berth/ports';
import { HostLocks } from './host-lock';
import { WORKSPACE_OWNER, WORKSPACE_TARGETS, checkWorkspaceId, isSpareId, sessionWorkspaceId, spareId } from './workspace-ids';

const run = promisify(execFile);

/** The smallest filesystem worth making (ext4 needs room for its own metadata). */
export const MIN_LOOP_WORKSPACE_BYTES = 16 * 1024 * 1024;

/**
 * Workspaces as one ext4 filesystem image per workspace, loop-mounted on the host and bind-mounted
 * into the sandbox (`<mount>/workspace` → /workspace, `<mount>/session` → /mnt/session): the size
 * limit is the filesystem's size, so an agent that fills it gets ENOSPC and nothing else on the host
 * does. Images are sparse (a 10 GiB limit costs what is written). Needs what the engine's host has:
 * this process as root in the engine's mount namespace, `mount` and `mkfs.ext4` (the manager on the
 * Docker host; see `detectWorkspaceKind`). Which workspace a session owns is a symlink
 * `sessions/<session>` → the workspace id, made with an exclusive create: one adopter wins.
 * Making, mounting and removing a workspace hold its lock in this process and in `<root>/locks`,
 * so several sandbox-managers on one host never mount one image twice nor remove it mid-mount.
 *
 *   <root>/images/<id>.img   <root>/mnt/<id>/{workspace,session/{uploads,outputs}}   <root>/sessions/<session>
 */
export class LoopWorkspaces implements SessionWorkspaces {
  readonly kind = 'loop' as const;
  private readonly inProcess = new KeyedLock();
  private readonly onHost: HostLocks;

  constructor(private readonly root: string) {
    this.onHost = new HostLocks(join(root, 'locks'));
  }

  /** One operation on a workspace at a time, in this process and across the processes sharing the root. */
  private guarded<T>(id: string, work: () => Promise<T>): Promise<T> {
    return this.inProcess.run(id, () => this.onHost.run(id, work));
  }

  async createSpare(limitBytes: number): Promise<Workspace> {
    const id = spareId(randomBytes(6).toString('hex'));
    await this.guarded(id, () => this.make(id, limitBytes));
    return this.workspace(id);
  }

  async ofSession(sessionId: string): Promise<Workspace | null> {
    const id = await this.aliasTarget(sessionId);
    if (id === null) return null;
    await this.guarded(id, () => this.ensureMounted(id));
    return this.workspace(id);
  }

  async forSession(sessionId: string, limitBytes: number): Promise<Workspace> {
    const owned = await this.ofSession(sessionId);
    if (owned !== null) return owned;
    const id = sessionWorkspaceId(sessionId);
    await this.guarded(id, () => this.make(id, limitBytes));
    const winner = await this.claimAlias(sessionId, id);
    if (winner !== id) await this.destroy(id);
    await this.guarded(winner, () => this.ensureMounted(winner));
    return this.workspace(winner);
  }

  /** Where the session's workspace image is mounted on this host (its `workspace/` and `session/` trees), or null when it has none. */
  async hostRoot(sessionId: string): Promise<string | null> {
    const id = await this.aliasTarget(sessionId);
    if (id === null) return null;
    await this.guarded(id, () => this.ensureMounted(id));
    return this.mountPath(id);
  }

  async adopt(sessionId: string, workspaceId: string): Promise<boolean> {
    return (await this.claimAlias(sessionId, checkWorkspaceId(workspaceId))) === workspaceId;
  }

  async removeSession(sessionId: string): Promise<void> {
    const id = await this.aliasTarget(sessionId);
    if (id !== null) await this.destroy(id);
    await rm(this.aliasPath(sessionId), { force: true });
  }

  async removeSpare(workspaceId: string): Promise<void> {
    await this.destroy(checkWorkspaceId(workspaceId));
  }

  /** `madeAt`: the image's mtime (mkfs writes it last; writes through the mount only make it later). */
  async spares(): Promise<readonly SpareWorkspace[]> {
    const images = await readdir(join(this.root, 'images')).catch(() => [] as string[]);
    const aliases = await readdir(join(this.root, 'sessions')).catch(() => [] as string[]);
    const adopted = new Set(await Promise.all(aliases.map((a) => readlink(join(this.root, 'sessions', a)).catch(() => ''))));
    const ids = images.filter((f) => f.endsWith('.img')).map((f) => f.slice(0, -4)).filter((id) => isSpareId(id) && !adopted.has(id));
    const spares = await Promise.all(ids.map(async (id) => ({ id, madeAt: (await stat(this.imagePath(id)).catch(() => null))?.mtime.toISOString() })));
    // An image removed meanwhile is no spare any more.
    return spares.filter((s): s is SpareWorkspace => s.madeAt !== undefined);
  }

  private workspace(id: string): Workspace {
    const mount = this.mountPath(id);
    return {
      id,
      mounts: [
        { type: 'bind', source: join(mount, 'workspace'), target: WORKSPACE_TARGETS.workspace },
        { type: 'bind', source: join(mount, 'session'), target: WORKSPACE_TARGETS.session },
      ],
    };
  }

  /** Image made in a temporary file and linked into place (an existing image is kept), then mounted and laid out. */
  private async make(id: string, limitBytes: number): Promise<void> {
    if (!Number.isInteger(limitBytes) || limitBytes < MIN_LOOP_WORKSPACE_BYTES) {
      throw new ValidationError(`a workspace limit must be at least ${MIN_LOOP_WORKSPACE_BYTES} bytes`, 'workspace');
    }
    await mkdir(join(this.root, 'images'), { recursive: true });
    const image = this.imagePath(id);
    const partial = `${image}.${randomBytes(4).toString('hex')}.partial`;
    try {
      const handle = await open(partial, 'wx', 0o600);
      await handle.truncate(limitBytes);
      await handle.close();
      await run('mkfs.ext4', ['-q', '-F', '-m', '0', '-E', `root_owner=${WORKSPACE_OWNER.uid}:${WORKSPACE_OWNER.gid}`, '-L', 'berth-ws', partial]);
      await link(partial, image).catch((e: unknown) => {
        if (!isCode(e, 'EEXIST')) throw e;
      });
    } finally {
      await unlink(partial).catch(() => undefined);
    }
    await this.ensureMounted(id);
  }

  private async ensureMounted(id: string): Promise<void> {
    const mount = this.mountPath(id);
    if (!(await isMountPoint(mount))) {
      await mkdir(mount, { recursive: true, mode: 0o700 });
      await run('mount', ['-t', 'ext4', '-o', 'loop,nosuid,nodev,noatime', this.imagePath(id), mount]);
    } else {
      // A manager that died while snapshotting it (LoopWorkspaceSnapshots) left it frozen; not frozen answers EINVAL.
      await run('fsfreeze', ['--unfreeze', mount]).catch(() => undefined);
    }
    for (const dir of ['workspace', 'session', 'session/uploads', 'session/outputs']) {
      const path = join(mount, dir);
      await mkdir(path, { recursive: true });
      await chown(path, WORKSPACE_OWNER.uid, WORKSPACE_OWNER.gid);
    }
    // ext4's lost+found sits at the image root, beside the two directories sandboxes see.
    await rmdir(join(mount, 'lost+found')).catch(() => undefined);
  }

  private async destroy(id: string): Promise<void> {
    await this.guarded(id, async () => {
      const mount = this.mountPath(id);
      // A sandbox still holding its binds keeps the filesystem alive until it stops; the host lets go now.
      if (await isMountPoint(mount)) await run('umount', ['--lazy', mount]);
      await rm(mount, { recursive: true, force: true });
      await rm(this.imagePath(id), { force: true });
    });
  }

  private async claimAlias(sessionId: string, workspaceId: string): Promise<string> {
    await mkdir(join(this.root, 'sessions'), { recursive: true });
    try {
      await symlink(workspaceId, this.aliasPath(sessionId));
      return workspaceId;
    } catch (e) {
      if (!isCode(e, 'EEXIST')) throw e;
    }
    return (await this.aliasTarget(sessionId)) ?? workspaceId;
  }

  private async aliasTarget(sessionId: string): Promise<string | null> {
    try {
      return checkWorkspaceId(await readlink(this.aliasPath(sessionId)));
    } catch (e) {
      if (isCode(e, 'ENOENT')) return null;
      throw e;
    }
  }

  private imagePath = (id: string): string => join(this.root, 'images', `${id}.img`);
  private mountPath = (id: string): string => join(this.root, 'mnt', id);
  private aliasPath = (sessionId: string): string => join(this.root, 'sessions', checkWorkspaceId(sessionWorkspaceId(sessionId)).slice(4));
}

/** Whether `path` is a mount point in this process's mount namespace (/proc/self/mountinfo, field 5). */
async function isMountPoint(path: string): Promise<boolean> {
  const info = await readFile('/proc/self/mountinfo', 'utf8');
  const escaped = path.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
  return info.split('\n').some((line) => line.split(' ')[4] === escaped);
}
