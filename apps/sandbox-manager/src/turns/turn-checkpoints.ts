import type { TurnCheckpoint } from '@berth/contracts';
import type { Logger, TranscriptMirror, WorkspaceSnapshots } from '@berth/ports';
import type { EnvironmentSettingsReader } from '../sandboxes/environment-settings';

/** Taking no snapshots (`volume` workspaces): a fork of such a session is refused, its turns have no workspace to start from. */
export const NO_WORKSPACE_SNAPSHOTS: WorkspaceSnapshots = {
  supported: false,
  take: async () => null,
  seed: async () => {
    throw new Error('forking a session needs loop workspaces (BERTH_WORKSPACE_STORAGE=loop): volume workspaces take no per-turn snapshots');
  },
  removeSession: async () => undefined,
};

export type CheckpointTurn = Readonly<{ session_id: string; turn_id: string; owner_id: string; environment_id: string }>;

/**
 * What a turn leaves for a fork, taken at its terminal line: a snapshot of the workspace under the
 * environment's `workspace_snapshots` retention, and how far each transcript file is mirrored once
 * the turn's last mirror is done (the snapshot does not wait for it). A snapshot that fails is logged
 * and left out (the turn still completes; a fork at it is refused); a transcript that cannot be
 * read leaves no checkpoint.
 */
export class TurnCheckpoints {
  constructor(
    private readonly deps: Readonly<{ snapshots: WorkspaceSnapshots; transcripts: TranscriptMirror; settings: EnvironmentSettingsReader; log: Logger }>,
  ) {}

  /** `transcriptMirrored` resolves once the transcript's mirror at the turn's end is done: the cut is read after it. */
  async take(turn: CheckpointTurn, transcriptMirrored: Promise<void>): Promise<TurnCheckpoint | undefined> {
    const log = this.deps.log.child({ session_id: turn.session_id, turn_id: turn.turn_id });
    const [transcript, snapshot] = await Promise.all([
      transcriptMirrored.then(() => this.deps.transcripts.sizes(turn.session_id)).catch((error: unknown) => {
        log.warn('no checkpoint: the transcript mirror could not be read', { err: error });
        return null;
      }),
      this.snapshot(turn).catch((error: unknown) => {
        log.warn('workspace snapshot failed; this turn cannot be forked from', { err: error });
        return null;
      }),
    ]);
    if (transcript === null) return undefined;
    return {
      transcript: [...transcript],
      workspace: snapshot === null ? null : { bytes: snapshot.bytes, files: snapshot.files },
      ...(this.deps.snapshots.supported ? {} : { workspace_unsupported: true as const }),
      dropped_turn_ids: snapshot === null ? [] : [...snapshot.dropped_turn_ids],
    };
  }

  private async snapshot(turn: CheckpointTurn) {
    if (!this.deps.snapshots.supported) return null;
    const { snapshots } = (await this.deps.settings.read(turn.owner_id, turn.environment_id)).sandbox;
    return this.deps.snapshots.take(turn.session_id, turn.turn_id, snapshots);
  }
}
