import { createHash, randomBytes } from 'node:crypto';
import type { SessionWorkspaces, SpareWorkspace, Workspace } from '@berth/ports';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { apiError, statusOf } from './api-errors';

/** Where a workspace is mounted in every sandbox (mirrors SessionPaths in @berth/contracts; infra may not import it). */
const TARGETS = { workspace: '/workspace', session: '/mnt/session' } as const;
const LABEL = { managed: 'berth.managed', workspace: 'berth.workspace', spare: 'berth.workspace-spare' } as const;
const REF_KEY = 'workspace';

const hash = (text: string): string => createHash('sha256').update(text).digest('hex').slice(0, 20);
/** Kubernetes names are DNS labels and workspace ids are not (`wss-sesn_…`): a hash of the id, the id itself a label. */
export const claimNameOf = (workspaceId: string, part: 'workspace' | 'session'): string => `berth-ws-${hash(workspaceId)}-${part}`;
const refNameOf = (sessionId: string): string => `berth-wsref-${hash(sessionId)}`;

export type ClaimWorkspacesOptions = Readonly<{
  kubeConfig: KubeConfig;
  namespace: string;
  /** The StorageClass of workspace claims; null: the cluster's default. */
  storageClass: string | null;
  scopeLabels?: Readonly<Record<string, string>>;
}>;

/**
 * Workspaces as PersistentVolumeClaims (one for `/workspace`, one for `/mnt/session`, ReadWriteOnce:
 * a session has one pod at a time), so a session's work outlives its pods as a loop image or a
 * Docker volume outlives its containers. The limit is the claim's storage request: whether it is
 * enforced is the StorageClass's business (many provisioners do not), so the manager treats it as
 * a soft limit, as for Docker volumes. Which workspace a session owns is a ConfigMap
 * `berth-wsref-<hash of the session>` naming it: creating one whose name exists fails, so two racing
 * adoptions both read back whichever was created first (the API server's compare-and-set).
 */
export class ClaimWorkspaces implements SessionWorkspaces {
  readonly kind = 'claim' as const;
  private readonly core: CoreV1Api;

  constructor(private readonly options: ClaimWorkspacesOptions) {
    this.core = options.kubeConfig.makeApiClient(CoreV1Api);
  }

  async createSpare(limitBytes: number): Promise<Workspace> {
    const id = `wsp-${randomBytes(6).toString('hex')}`;
    await this.createClaims(id, limitBytes, { [LABEL.spare]: 'true' });
    return this.workspace(id);
  }

  async ofSession(sessionId: string): Promise<Workspace | null> {
    const id = await this.refTarget(sessionId);
    return id === null ? null : this.workspace(id);
  }

  async forSession(sessionId: string, limitBytes: number): Promise<Workspace> {
    const owned = await this.ofSession(sessionId);
    if (owned !== null) return owned;
    const id = `wss-${sessionId}`;
    await this.createClaims(id, limitBytes, {});
    const winner = await this.claimRef(sessionId, id);
    if (winner !== id) await this.removeClaims(id);
    return this.workspace(winner);
  }

  async adopt(sessionId: string, workspaceId: string): Promise<boolean> {
    return (await this.claimRef(sessionId, workspaceId)) === workspaceId;
  }

  async removeSession(sessionId: string): Promise<void> {
    const id = await this.refTarget(sessionId);
    if (id !== null) await this.removeClaims(id);
    try {
      await this.core.deleteNamespacedConfigMap({ name: refNameOf(sessionId), namespace: this.options.namespace });
    } catch (error) {
      if (statusOf(error) !== 404) throw apiError('delete workspace reference of', sessionId, error);
    }
  }

  async removeSpare(workspaceId: string): Promise<void> {
    await this.removeClaims(workspaceId);
  }

  /** Spare claims no session reference names; `madeAt`: the later of its two claims' creation. */
  async spares(): Promise<readonly SpareWorkspace[]> {
    const selector = (labels: Record<string, string>) =>
      Object.entries({ ...this.options.scopeLabels, ...labels })
        .map(([k, v]) => `${k}=${v}`)
        .join(',');
    const namespace = this.options.namespace;
    try {
      const claims = await this.core.listNamespacedPersistentVolumeClaim({ namespace, labelSelector: selector({ [LABEL.spare]: 'true' }) });
      const refs = await this.core.listNamespacedConfigMap({ namespace, labelSelector: selector({ [LABEL.managed]: 'true' }) });
      const adopted = new Set(refs.items.map((r) => r.data?.[REF_KEY]));
      const madeAt = new Map<string, number>();
      for (const claim of claims.items) {
        const id = claim.metadata?.labels?.[LABEL.workspace];
        if (id === undefined || adopted.has(id)) continue;
        // A claim without a creation time (none from this API server) makes the spare's unreadable: it is kept.
        const created = claim.metadata?.creationTimestamp === undefined ? NaN : new Date(claim.metadata.creationTimestamp).getTime();
        const known = madeAt.get(id);
        if (known === undefined || !(known >= created)) madeAt.set(id, created);
      }
      return [...madeAt].map(([id, at]) => ({ id, madeAt: Number.isNaN(at) ? '' : new Date(at).toISOString() }));
    } catch (error) {
      throw apiError('list spare workspaces', namespace, error);
    }
  }

  private workspace(id: string): Workspace {
    return {
      id,
      mounts: [
        { type: 'volume', source: claimNameOf(id, 'workspace'), target: TARGETS.workspace },
        { type: 'volume', source: claimNameOf(id, 'session'), target: TARGETS.session },
      ],
    };
  }

  private async createClaims(id: string, limitBytes: number, labels: Record<string, string>): Promise<void> {
    for (const part of ['workspace', 'session'] as const) {
      const name = claimNameOf(id, part);
      try {
        await this.core.createNamespacedPersistentVolumeClaim({ namespace: this.options.namespace, body: workspaceClaim(name, id, limitBytes, { ...this.options.scopeLabels, ...labels }, this.options.storageClass) });
      } catch (error) {
        if (statusOf(error) !== 409) throw apiError('create workspace claim', name, error);
      }
    }
  }

  /** The workspace the session's reference names once it exists: ours, or the one a racing adopter created first. */
  private async claimRef(sessionId: string, workspaceId: string): Promise<string> {
    try {
      await this.core.createNamespacedConfigMap({
        namespace: this.options.namespace,
        body: { metadata: { name: refNameOf(sessionId), labels: { ...this.options.scopeLabels, [LABEL.managed]: 'true', [LABEL.workspace]: workspaceId } }, data: { [REF_KEY]: workspaceId, session: sessionId } },
      });
    } catch (error) {
      if (statusOf(error) !== 409) throw apiError('create workspace reference of', sessionId, error);
    }
    return (await this.refTarget(sessionId)) ?? workspaceId;
  }

  private async refTarget(sessionId: string): Promise<string | null> {
    try {
      const ref = await this.core.readNamespacedConfigMap({ name: refNameOf(sessionId), namespace: this.options.namespace });
      return ref.data?.[REF_KEY] ?? null;
    } catch (error) {
      if (statusOf(error) === 404) return null;
      throw apiError('read workspace reference of', sessionId, error);
    }
  }

  private async removeClaims(id: string): Promise<void> {
    for (const part of ['workspace', 'session'] as const) {
      try {
        await this.core.deleteNamespacedPersistentVolumeClaim({ name: claimNameOf(id, part), namespace: this.options.namespace });
      } catch (error) {
        if (statusOf(error) !== 404) throw apiError('delete workspace claim', claimNameOf(id, part), error);
      }
    }
  }
}

/** One workspace claim: ReadWriteOnce, the limit as its storage request, labelled with the workspace id. */
export function workspaceClaim(name: string, workspaceId: string, limitBytes: number, labels: Readonly<Record<string, string>>, storageClass: string | null): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, labels: { ...labels, [LABEL.managed]: 'true', [LABEL.workspace]: workspaceId } },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: String(Math.max(1, Math.floor(limitBytes))) } },
      ...(storageClass === null ? {} : { storageClassName: storageClass }),
    },
  };
}
