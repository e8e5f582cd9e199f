import { randomBytes } from 'node:crypto';
import type { SessionWorkspaces, SpareWorkspace, Workspace } from '@berth/ports';
import type Docker from 'dockerode';
import { engineError, isConflict, isNotFound } from '../docker-errors';
import { WORKSPACE_TARGETS, spareId, sessionWorkspaceId } from './workspace-ids';

const LABEL = { managed: 'berth.managed', workspace: 'berth.workspace', spare: 'berth.workspace-spare', of: 'berth.workspace-of' } as const;

const volumeOf = (id: string, part: 'workspace' | 'session'): string => `berth-ws-${id}-${part}`;
const aliasOf = (sessionId: string): string => `berth-wsref-${sessionId}`;

/**
 * Workspaces as Docker named volumes (one for `/workspace`, one for `/mnt/session`), for engines
 * Berth cannot reach the host of (Docker Desktop, a remote engine, a manager in a container).
 * Docker's local volumes have no size limit, so this kind enforces none. Which workspace a session
 * owns is recorded by Docker itself: an empty alias volume `berth-wsref-<session>` labelled with
 * the workspace id. Creating a volume whose name exists returns the existing one, so two racing
 * adoptions both read back the label of whichever was created first.
 */
export class VolumeWorkspaces implements SessionWorkspaces {
  readonly kind = 'volume' as const;

  constructor(
    private readonly docker: Docker,
    private readonly scopeLabels: Readonly<Record<string, string>> = {},
  ) {}

  /** Docker's local volumes take no size: the limit is not enforced by this kind. */
  async createSpare(_limitBytes: number): Promise<Workspace> {
    const id = spareId(randomBytes(6).toString('hex'));
    await this.createVolumes(id, { [LABEL.spare]: 'true' });
    return this.workspace(id);
  }

  async ofSession(sessionId: string): Promise<Workspace | null> {
    const id = await this.aliasTarget(sessionId);
    if (id === null) return null;
    // A volume removed behind Berth's back comes back empty rather than failing every start.
    await this.createVolumes(id, {});
    return this.workspace(id);
  }

  async forSession(sessionId: string, _limitBytes: number): Promise<Workspace> {
    const owned = await this.ofSession(sessionId);
    if (owned !== null) return owned;
    const id = sessionWorkspaceId(sessionId);
    await this.createVolumes(id, {});
    const winner = await this.claimAlias(sessionId, id);
    if (winner !== id) await this.removeVolumes(id);
    return this.workspace(winner);
  }

  async adopt(sessionId: string, workspaceId: string): Promise<boolean> {
    return (await this.claimAlias(sessionId, workspaceId)) === workspaceId;
  }

  async removeSession(sessionId: string): Promise<void> {
    const id = await this.aliasTarget(sessionId);
    if (id !== null) await this.removeVolumes(id);
    await this.removeVolume(aliasOf(sessionId));
  }

  async removeSpare(workspaceId: string): Promise<void> {
    await this.removeVolumes(workspaceId);
  }

  /** `madeAt`: the later of its two volumes' creation (Docker's `CreatedAt`; one it does not give makes the whole unreadable). */
  async spares(): Promise<readonly SpareWorkspace[]> {
    const volumes = await this.listVolumes({ [LABEL.spare]: 'true' });
    const adopted = new Set((await this.listVolumes({ [LABEL.of]: '' })).map((v) => v.Labels?.[LABEL.workspace]));
    const madeAt = new Map<string, string>();
    for (const v of volumes) {
      const id = v.Labels?.[LABEL.workspace];
      if (id === undefined || adopted.has(id)) continue;
      const created = (v as { CreatedAt?: string }).CreatedAt ?? '';
      const known = madeAt.get(id);
      if (known === undefined || !(Date.parse(known) >= Date.parse(created))) madeAt.set(id, created);
    }
    return [...madeAt].map(([id, at]) => ({ id, madeAt: at }));
  }

  private workspace(id: string): Workspace {
    return {
      id,
      mounts: [
        { type: 'volume', source: volumeOf(id, 'workspace'), target: WORKSPACE_TARGETS.workspace },
        { type: 'volume', source: volumeOf(id, 'session'), target: WORKSPACE_TARGETS.session },
      ],
    };
  }

  private async createVolumes(id: string, labels: Record<string, string>): Promise<void> {
    for (const part of ['workspace', 'session'] as const) {
      await this.createVolume(volumeOf(id, part), { ...labels, [LABEL.workspace]: id });
    }
  }

  private async createVolume(name: string, labels: Record<string, string>): Promise<void> {
    try {
      await this.docker.createVolume({ Name: name, Driver: 'local', Labels: { ...this.scopeLabels, [LABEL.managed]: 'true', ...labels } });
    } catch (error) {
      throw engineError('volume create', name, error);
    }
  }

  /** The workspace the alias names once it exists: ours, or the one a racing adopter created first. */
  private async claimAlias(sessionId: string, workspaceId: string): Promise<string> {
    await this.createVolume(aliasOf(sessionId), { [LABEL.of]: sessionId, [LABEL.workspace]: workspaceId });
    return (await this.aliasTarget(sessionId)) ?? workspaceId;
  }

  private async aliasTarget(sessionId: string): Promise<string | null> {
    try {
      const volume = await this.docker.getVolume(aliasOf(sessionId)).inspect();
      return volume.Labels?.[LABEL.workspace] ?? null;
    } catch (error) {
      if (isNotFound(error)) return null;
      throw engineError('volume inspect', aliasOf(sessionId), error);
    }
  }

  private async removeVolumes(id: string): Promise<void> {
    for (const part of ['workspace', 'session'] as const) await this.removeVolume(volumeOf(id, part));
  }

  private async removeVolume(name: string): Promise<void> {
    try {
      await this.docker.getVolume(name).remove();
    } catch (error) {
      if (isNotFound(error)) return;
      if (isConflict(error)) throw engineError('volume remove', name, new Error('a container still uses it'));
      throw engineError('volume remove', name, error);
    }
  }

  private async listVolumes(labels: Record<string, string>): Promise<Docker.VolumeInspectInfo[]> {
    const filters = Object.entries({ ...this.scopeLabels, ...labels }).map(([k, v]) => (v === '' ? k : `${k}=${v}`));
    try {
      return (await this.docker.listVolumes({ filters: JSON.stringify({ label: filters }) })).Volumes ?? [];
    } catch (error) {
      throw engineError('volume ls', filters.join(','), error);
    }
  }
}
