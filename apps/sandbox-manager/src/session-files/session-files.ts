import { createHash } from 'node:crypto';
import { SessionPaths } from '@berth/contracts';
import type { CommandBus, Logger, SandboxRuntime, SessionWorkspaces } from '@berth/ports';
import { sessionLayoutArchive } from '@berth/docker';
import type { SandboxRequest } from '../sandboxes/sandbox-service';
import type { ManagerCommands } from '../sessions/manager-commands';
import { sendReliably } from '../sessions/send-reliably';
import type { SessionFactsReader } from '../sessions/session-facts';
import type { OutputCapture } from './output-capture';
import { ResourceUnavailable, type ResourceMounter } from './resource-mounter';

/**
 * What the sandbox-manager does with a session's files around its sandboxes and turns: lay out a
 * new sandbox's session directories and mount the session's resources before it is bound; mount
 * resources added since before a turn runs; capture the outputs after each turn, before its outcome
 * is reported (a client that sees the session idle finds them listed); drop the workspace with the
 * session.
 */
export class SessionFiles {
  constructor(
    private readonly deps: Readonly<{
      runtime: SandboxRuntime;
      workspaces: SessionWorkspaces;
      mounter: ResourceMounter;
      capture: OutputCapture;
      facts: SessionFactsReader;
      bus: CommandBus;
      commands: ManagerCommands;
      log: Logger;
    }>,
  ) {}

  /**
   * A new sandbox: directories, then resources. A resource that cannot be mounted does not keep the
   * sandbox from being bound; it is reported as a session error here and fails the next turn.
   */
  prepare = async (request: SandboxRequest, sandboxId: string): Promise<void> => {
    await this.deps.runtime.putArchive(sandboxId, SessionPaths.session, sessionLayoutArchive());
    const { state } = await this.deps.facts.load(request.sessionId);
    try {
      await this.deps.mounter.ensure({ ownerId: request.ownerId, sessionId: request.sessionId, sandboxId, resources: state.resources });
    } catch (error) {
      if (!(error instanceof ResourceUnavailable)) throw error;
      this.deps.log.warn(error.message, { session_id: request.sessionId, sandbox_id: sandboxId });
      const key = createHash('sha256').update(error.message).digest('hex').slice(0, 16);
      await sendReliably(
        this.deps.bus,
        this.deps.commands.make('RaiseSessionError', request.sessionId, `rsrc_${request.sessionId}_g${request.generation}_${key}`, {
          error_type: 'berth.resource_unavailable_error',
          message: error.message.slice(0, 4096),
          retry_status: 'retrying',
        }),
        this.deps.log,
      );
    }
  };

  /** Before a turn: every resource in place, or ResourceUnavailable saying which is not. */
  async beforeTurn(sessionId: string, sandboxId: string): Promise<void> {
    const { state } = await this.deps.facts.load(sessionId);
    await this.deps.mounter.ensure({ ownerId: state.owner_id, sessionId, sandboxId, resources: state.resources });
  }

  /** After a turn, before its outcome: outputs become session-scoped files. A failure is logged, never blocks the turn. */
  async afterTurn(sessionId: string, sandboxId: string): Promise<void> {
    try {
      const { state } = await this.deps.facts.load(sessionId);
      const captured = await this.deps.capture.capture({ ownerId: state.owner_id, sessionId, sandboxId });
      if (captured > 0) this.deps.log.info('outputs captured', { session_id: sessionId, sandbox_id: sandboxId, files: captured });
    } catch (error) {
      this.deps.log.warn('outputs not captured', { session_id: sessionId, sandbox_id: sandboxId, err: error });
    }
  }

  /** The sandbox is gone: nothing of it is remembered. */
  released(sandboxId: string): void {
    this.deps.mounter.forget(sandboxId);
  }

  /** The session was deleted and its sandboxes removed: its workspace goes too. */
  async removeWorkspace(sessionId: string): Promise<void> {
    await this.deps.workspaces.removeSession(sessionId);
    this.deps.log.info('workspace removed', { session_id: sessionId });
  }
}
