import type { SandboxMount } from './sandbox-runtime.port';

/**
 * Where a session's `/workspace` and `/mnt/session` (uploads and outputs) live so that they
 * outlive its sandboxes: every sandbox of the session mounts the same workspace again. Mounts
 * cannot be added to a running container, so a warm-pool container is started with a *spare*
 * workspace, and the session that claims it adopts that spare as its own.
 */
export type Workspace = Readonly<{ id: string; mounts: readonly SandboxMount[] }>;

/** A spare nobody adopted, and when it was made (ISO time). */
export type SpareWorkspace = Readonly<{ id: string; madeAt: string }>;

export interface SessionWorkspaces {
  /**
   * `loop`: a filesystem image per workspace (the size limit is the filesystem's size); `volume`:
   * Docker named volumes (no size limit); `claim`: Kubernetes PersistentVolumeClaims (the limit is
   * the claim's request, enforced only by some storage classes).
   */
  readonly kind: 'loop' | 'volume' | 'claim';
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
  /** Spares nobody adopted (start-up reconcile removes those no container uses, once old enough: see `orphanSpares`). */
  spares(): Promise<readonly SpareWorkspace[]>;
}

/** How many per-turn snapshots of a session's workspace are kept, and how many bytes they may use together. */
export type SnapshotRetention = Readonly<{ keep: number; maxBytes: number }>;

/** One per-turn snapshot: the bytes it added (what is not shared with the previous one), its files, and the turns retention dropped for it. */
export type TakenSnapshot = Readonly<{ bytes: number; files: number; dropped_turn_ids: readonly string[] }>;

/**
 * Per-turn snapshots of session workspaces: taken when a turn ends, the start of a fork's workspace.
 * An adapter that cannot take them answers `take` with null (a fork of such a session is refused).
 */
export interface WorkspaceSnapshots {
  /** False for workspaces this port can never snapshot (`take` always answers null): a fork of their turns is refused as unsupported. */
  readonly supported: boolean;
  /** Snapshots the session's workspace as it is at the end of `turnId`, then applies `retention`; null: none taken (no workspace, snapshots off or unsupported). */
  take(sessionId: string, turnId: string, retention: SnapshotRetention): Promise<TakenSnapshot | null>;
  /** Makes `sessionId`'s workspace (at most `limitBytes`) a copy of `from`'s snapshot at its turn, once; a workspace already seeded is kept. */
  seed(sessionId: string, from: Readonly<{ session_id: string; turn_id: string }>, limitBytes: number): Promise<void>;
  /** Removes every snapshot of the session. */
  removeSession(sessionId: string): Promise<void>;
}
