import type { SandboxMount } from './sandbox-runtime.port';

/**
 * Where a session's `/workspace` and `/mnt/session` (uploads and outputs) live so that they
 * outlive its sandboxes: every sandbox of the session mounts the same workspace again. Mounts
 * cannot be added to a running container, so a warm-pool container is started with a *spare*
 * workspace, and the session that claims it adopts that spare as its own.
 */
export type Workspace = Readonly<{ id: string; mounts: readonly SandboxMount[] }>;

export interface SessionWorkspaces {
  /** `loop`: a filesystem image per workspace (the size limit is the filesystem's size); `volume`: Docker named volumes (no size limit). */
  readonly kind: 'loop' | 'volume';
  /** A fresh workspace of at most `limitBytes`, for a warm-pool container. */
  createSpare(limitBytes: number): Promise<Workspace>;
  /** The workspace the session owns, or null when it has none yet. */
  ofSession(sessionId: string): Promise<Workspace | null>;
  /** The session's workspace, made (at most `limitBytes`) when it has none. */
  forSession(sessionId: string, limitBytes: number): Promise<Workspace>;
  /** The session takes spare `workspaceId` over; false when it already owns another one (that one stays its workspace). */
  adopt(sessionId: string, workspaceId: string): Promise<boolean>;
  /** Removes the session's workspace and everything in it (its containers must be gone). */
  removeSession(sessionId: string): Promise<void>;
  /** Removes a spare nobody adopted. */
  removeSpare(workspaceId: string): Promise<void>;
  /** Spares nobody adopted (start-up reconcile removes those no container uses). */
  spares(): Promise<readonly string[]>;
}
