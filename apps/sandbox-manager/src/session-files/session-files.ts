import { SessionPaths, type SessionResource } from '@berth/contracts';
import type { BlobStore, Logger, SandboxRuntime, SessionWorkspaces, WorkspaceSnapshots } from '@berth/ports';
import { sessionLayoutArchive } from '@berth/docker';
import { managerCommands, type AcquireSandbox } from '@berth/sandbox-workflow';
import type { SendManagerCommand } from '../workflow/manager-sender';
import type { OutputCapture } from './output-capture';
import { ResourceUnavailable, type ResourceMounter } from './resource-mounter';

export type SandboxFiles = Readonly<{ ownerId: string; sessionId: string; sandboxId: string }>;

/**
 * The session-files activities the workflow's outputs call for: lay out a new sandbox's session
 * directories and mount the session's files before it is bound (`acquire_sandbox`: repositories
 * wait for the binding, since they are cloned through the sandbox's egress, which serves a bound
 * sandbox only; the first turn clones them before its harness starts); mount what
 * a sandbox lacks (`mount_resources`, and every turn before its harness starts); capture the
 * outputs after a turn, before it reports to the workflow (a client that sees the outcome finds
 * them listed); drop the workspace with the deleted session (`release_sandboxes`).
 */
export class SessionFiles {
  constructor(
    private readonly deps: Readonly<{
      runtime: SandboxRuntime;
      workspaces: SessionWorkspaces;
      snapshots: WorkspaceSnapshots;
      mounter: ResourceMounter;
      capture: OutputCapture;
      /** Where an import's workspace waits for its first sandbox. */
      blobs: BlobStore;
      send: SendManagerCommand;
      log: Logger;
    }>,
  ) {}

  /**
   * A new sandbox: directories, then file resources. A file that cannot be mounted does not keep the
   * sandbox from being bound; it is reported as a session error here and fails the next turn.
   */
  async prepare(o: AcquireSandbox, sandboxId: string): Promise<void> {
    await this.deps.runtime.putArchive(sandboxId, SessionPaths.session, sessionLayoutArchive());
    try {
      await this.mount({ ownerId: o.owner_id, sessionId: o.session_id, sandboxId }, o.resources.filter((r) => r.type === 'file'));
    } catch (error) {
      if (!(error instanceof ResourceUnavailable)) throw error;
      this.deps.log.warn(error.message, { session_id: o.session_id, sandbox_id: sandboxId });
      await this.deps.send(managerCommands.resourceUnavailable(o.session_id, o.generation, error.message));
    }
  }

  /** Every resource in place, or ResourceUnavailable saying which is not. */
  mount(where: SandboxFiles, resources: readonly SessionResource[]): Promise<void> {
    return this.deps.mounter.ensure({ ...where, resources });
  }

  /** After a turn, before it reports: outputs become session-scoped files. A failure is logged, never blocks the turn. */
  async captureOutputs(where: SandboxFiles): Promise<void> {
    try {
      const captured = await this.deps.capture.capture(where);
      if (captured > 0) this.deps.log.info('outputs captured', { session_id: where.sessionId, sandbox_id: where.sandboxId, files: captured });
    } catch (error) {
      this.deps.log.warn('outputs not captured', { session_id: where.sessionId, sandbox_id: where.sandboxId, err: error });
    }
  }

  /**
   * What the session's workspace holds (`/workspace` and `/mnt/session`), in bytes: `du` in the
   * sandbox as its user, so files the agent made unreadable to itself are not counted (the limit
   * this serves is a soft one, for `volume` workspaces; `loop` ones are bounded by their filesystem).
   */
  async workspaceBytes(sandboxId: string): Promise<number> {
    const handle = await this.deps.runtime.exec(sandboxId, { cmd: ['du', '-sxk', SessionPaths.workspace, SessionPaths.session], stdin: '' });
    let kib = 0;
    for await (const line of handle.lines) {
      const match = /^(\d+)\s+\//.exec(line);
      if (match) kib += Number(match[1]);
    }
    await handle.exit;
    return kib * 1024;
  }

  /** The sandbox is gone: nothing of it is remembered. */
  released(sandboxId: string): void {
    this.deps.mounter.forget(sandboxId);
  }

  /**
   * A fork's first sandbox: its workspace becomes a copy of the snapshot of the turn it forked from
   * (once; a rebuild finds it seeded). Then it mounts like any other session's.
   */
  async seedFork(o: AcquireSandbox, workspaceBytes: number): Promise<void> {
    if (o.fork_of === null) return;
    await this.deps.snapshots.seed(o.session_id, o.fork_of, workspaceBytes);
  }

  /**
   * An imported session's first sandbox: the archived workspace (checked and re-packed by the import,
   * owned by the sandbox user) is put into its `/workspace` before it is bound, and its blob deleted,
   * so it is restored once; a sandbox acquired again after a crash in between gets it again (no turn
   * ran on it yet).
   */
  async restoreImport(o: AcquireSandbox, sandboxId: string): Promise<void> {
    if (o.import_workspace === null) return;
    const archive = await this.deps.blobs.get(o.import_workspace);
    if (archive === null) return;
    await this.deps.runtime.putArchive(sandboxId, SessionPaths.workspace, archive);
    await this.deps.blobs.delete(o.import_workspace);
    this.deps.log.info('imported workspace restored', { session_id: o.session_id, sandbox_id: sandboxId });
  }

  /** The session was deleted and its sandboxes removed: its workspace and its snapshots go too. */
  async removeWorkspace(sessionId: string): Promise<void> {
    await this.deps.snapshots.removeSession(sessionId);
    await this.deps.workspaces.removeSession(sessionId);
    this.deps.log.info('workspace removed', { session_id: sessionId });
  }
}
