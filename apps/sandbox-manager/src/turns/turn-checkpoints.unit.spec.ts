import type { WorkspaceSnapshots } from '@berth/ports';
import { DEFAULT_SANDBOX_DEFAULTS } from '@berth/sandbox-domain';
import { MemoryStore, silentLogger } from '@berth/testing';
import { EnvironmentSettingsReader } from '../sandboxes/environment-settings';
import { NO_WORKSPACE_SNAPSHOTS, TurnCheckpoints } from './turn-checkpoints';

const TURN = { session_id: 'sesn_cp', turn_id: 'turn_cp', owner_id: 'owner_1', environment_id: 'env_cp' };

describe('a turn checkpoint', () => {
  const store = new MemoryStore();
  const settings = new EnvironmentSettingsReader(store.environments, { sandbox: DEFAULT_SANDBOX_DEFAULTS });
  const checkpoints = (snapshots: WorkspaceSnapshots) => new TurnCheckpoints({ snapshots, transcripts: store.transcripts, settings, log: silentLogger });

  beforeAll(() => store.transcripts.append({ session_id: TURN.session_id, path: '/home/agent/t.jsonl', offset: 0, data: '{"a":1}\n' }));

  it('of workspaces that take no snapshots (volume, Kubernetes) says so: a fork of it is refused as unsupported, not as a snapshot gone', async () => {
    expect(await checkpoints(NO_WORKSPACE_SNAPSHOTS).take(TURN, Promise.resolve())).toEqual({
      transcript: [{ path: '/home/agent/t.jsonl', bytes: 8 }],
      workspace: null,
      workspace_unsupported: true,
      dropped_turn_ids: [],
    });
  });

  it('of workspaces that take them carries the snapshot, and no such mark', async () => {
    const taken: string[] = [];
    const loopLike: WorkspaceSnapshots = {
      supported: true,
      take: async (_session, turnId) => {
        taken.push(turnId);
        return { bytes: 5, files: 1, dropped_turn_ids: ['turn_old'] };
      },
      seed: async () => undefined,
      removeSession: async () => undefined,
    };
    expect(await checkpoints(loopLike).take(TURN, Promise.resolve())).toEqual({ transcript: [{ path: '/home/agent/t.jsonl', bytes: 8 }], workspace: { bytes: 5, files: 1 }, dropped_turn_ids: ['turn_old'] });
    expect(taken).toEqual([TURN.turn_id]);
  });

  it("takes the snapshot at once and reads the transcript cut only once the turn's last mirror is done", async () => {
    const session = 'sesn_cp_later';
    await store.transcripts.append({ session_id: session, path: '/home/agent/t.jsonl', offset: 0, data: '{"a":1}\n' });
    let snapshotTaken!: () => void;
    const snapshotStarted = new Promise<void>((resolve) => (snapshotTaken = resolve));
    const loopLike: WorkspaceSnapshots = {
      supported: true,
      take: async () => {
        snapshotTaken();
        return { bytes: 5, files: 1, dropped_turn_ids: [] };
      },
      seed: async () => undefined,
      removeSession: async () => undefined,
    };
    let mirrorDone!: () => void;
    const mirrored = new Promise<void>((resolve) => (mirrorDone = resolve));
    const taken = checkpoints(loopLike).take({ ...TURN, session_id: session }, mirrored);
    await snapshotStarted;
    // The mirror at the turn's end appends the turn's last lines, then resolves.
    await store.transcripts.append({ session_id: session, path: '/home/agent/t.jsonl', offset: 8, data: '{"b":2}\n' });
    mirrorDone();
    expect((await taken)?.transcript).toEqual([{ path: '/home/agent/t.jsonl', bytes: 16 }]);
  });
});
