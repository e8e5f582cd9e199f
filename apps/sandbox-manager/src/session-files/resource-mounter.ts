import { posix } from 'node:path';
import { SessionPaths, sessionSecretAad, type SessionResource } from '@berth/contracts';
import { KeyedLock } from '@berth/core';
import type { BlobStore, FileStore, Logger, SandboxRuntime, SecretBox, SessionSecrets } from '@berth/ports';
import type { RepositoryCloner } from './repository-cloner';
import { fileArchive, treeArchive } from './tree-archive';

/** A resource that could not be put in place; the message says which and why. */
export class ResourceUnavailable extends Error {}

/** The directory a mount path is extracted into: the mount root it sits below (each exists in every sandbox). */
const ROOTS = [SessionPaths.uploads, SessionPaths.workspace, SessionPaths.home];
const rootOf = (mountPath: string): string => ROOTS.find((root) => mountPath.startsWith(`${root}/`)) ?? posix.dirname(mountPath);

/**
 * Puts a session's files and repositories in place in a sandbox before a turn runs there. What is
 * already at a mount path stays: a rebuilt sandbox mounts the session's workspace, so uploads and
 * clones made earlier are found there and never copied or cloned again (nor is the agent's work in
 * them overwritten); a mount path outside the workspace is filled again in each new sandbox.
 * One sandbox is filled by one caller at a time; what this process already did is remembered.
 */
export class ResourceMounter {
  private readonly lock = new KeyedLock();
  private readonly done = new Map<string, Set<string>>();

  constructor(
    private readonly deps: Readonly<{
      runtime: SandboxRuntime;
      files: FileStore;
      blobs: BlobStore;
      secrets: SessionSecrets;
      box: SecretBox;
      cloner: RepositoryCloner;
      /** The host path of a sandbox's egress socket (null: it has none), which its clones go out through. */
      egressSocketOf: (sandboxId: string) => Promise<string | null>;
      log: Logger;
    }>,
  ) {}

  /** Mounts every resource the sandbox lacks; throws ResourceUnavailable for the first one that cannot be. */
  ensure(input: Readonly<{ ownerId: string; sessionId: string; sandboxId: string; resources: readonly SessionResource[] }>): Promise<void> {
    return this.lock.run(input.sandboxId, async () => {
      const done = this.done.get(input.sandboxId) ?? new Set<string>();
      this.done.set(input.sandboxId, done);
      for (const resource of input.resources) {
        if (done.has(resource.id)) continue;
        if ((await this.deps.runtime.stat(input.sandboxId, resource.mount_path)) === null) await this.mount(input, resource);
        done.add(resource.id);
      }
    });
  }

  /** The sandbox is gone: forget what was done in it. */
  forget(sandboxId: string): void {
    this.done.delete(sandboxId);
  }

  private async mount(input: Readonly<{ ownerId: string; sessionId: string; sandboxId: string }>, resource: SessionResource): Promise<void> {
    const root = rootOf(resource.mount_path);
    const relative = posix.relative(root, resource.mount_path);
    if (resource.type === 'file') {
      const file = await this.deps.files.get(input.ownerId, resource.file_id);
      const bytes = file === null || file.deleted ? null : await this.deps.blobs.get(file.blob_key);
      if (file === null || bytes === null) throw new ResourceUnavailable(`file ${resource.file_id} (resource ${resource.id}) no longer exists; remove the resource or upload the file again`);
      await this.deps.runtime.putArchive(input.sandboxId, root, fileArchive(relative, file.size_bytes, bytes));
      this.deps.log.info('file mounted', { session_id: input.sessionId, sandbox_id: input.sandboxId, file_id: file.id, mount_path: resource.mount_path });
      return;
    }
    const egressSocket = await this.deps.egressSocketOf(input.sandboxId);
    if (egressSocket === null) throw new ResourceUnavailable(`repository ${resource.url} (resource ${resource.id}) could not be cloned: sandbox ${input.sandboxId} has no egress socket on this manager's machine, which clones go out through (the Kubernetes runtime clones no repositories yet)`);
    const token = await this.tokenOf(input.sessionId, resource);
    try {
      await this.deps.cloner.withClone({ url: resource.url, checkout: resource.checkout, token, egressSocket }, (dir) => this.deps.runtime.putArchive(input.sandboxId, root, treeArchive(dir, relative)));
    } catch (error) {
      throw new ResourceUnavailable(`repository ${resource.url} (resource ${resource.id}) could not be cloned: ${error instanceof Error ? error.message : String(error)}`);
    }
    this.deps.log.info('repository cloned', { session_id: input.sessionId, sandbox_id: input.sandboxId, url: resource.url, mount_path: resource.mount_path });
  }

  /** The repository's token, opened here, just before the clone that needs it (the store keeps it sealed). */
  private async tokenOf(sessionId: string, resource: SessionResource): Promise<string | null> {
    const sealed = await this.deps.secrets.get(sessionId, resource.id);
    if (sealed === null) return null;
    try {
      return this.deps.box.open(sealed, sessionSecretAad(sessionId, resource.id));
    } catch (error) {
      throw new ResourceUnavailable(`the token of repository resource ${resource.id} could not be opened: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
