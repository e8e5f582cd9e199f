import type { SessionWorkspaces, SpareWorkspace, Workspace } from '@berth/ports';

/**
 * `SessionWorkspaces` in Maps, with the real kinds' rules: a spare is adopted by at most one
 * session, a session keeps the first workspace it owns, removing forgets. `limits` records the size
 * each workspace was made with; `now` stamps when (a spare's `madeAt`).
 */
export class InMemoryWorkspaces implements SessionWorkspaces {
  readonly kind = 'volume' as const;
  private readonly made = new Set<string>();
  private readonly owners = new Map<string, string>();
  readonly limits = new Map<string, number>();
  private readonly madeAt = new Map<string, string>();
  private next = 1;

  constructor(private readonly now: () => Date = () => new Date()) {}

  async createSpare(limitBytes: number): Promise<Workspace> {
    return this.make(`wsp-${String(this.next++).padStart(6, '0')}`, limitBytes);
  }

  async ofSession(sessionId: string): Promise<Workspace | null> {
    const id = this.owners.get(sessionId);
    return id === undefined ? null : this.workspace(id);
  }

  async forSession(sessionId: string, limitBytes: number): Promise<Workspace> {
    const owned = await this.ofSession(sessionId);
    if (owned !== null) return owned;
    this.owners.set(sessionId, `wss-${sessionId}`);
    return this.make(`wss-${sessionId}`, limitBytes);
  }

  async adopt(sessionId: string, workspaceId: string): Promise<boolean> {
    if (!this.made.has(workspaceId)) return false;
    const owned = this.owners.get(sessionId);
    if (owned !== undefined) return owned === workspaceId;
    if ([...this.owners.values()].includes(workspaceId)) return false;
    this.owners.set(sessionId, workspaceId);
    return true;
  }

  async removeSession(sessionId: string): Promise<void> {
    const id = this.owners.get(sessionId);
    this.owners.delete(sessionId);
    if (id !== undefined) this.made.delete(id);
  }

  async removeSpare(workspaceId: string): Promise<void> {
    if (![...this.owners.values()].includes(workspaceId)) this.made.delete(workspaceId);
  }

  async spares(): Promise<readonly SpareWorkspace[]> {
    const adopted = new Set(this.owners.values());
    return [...this.made].filter((id) => id.startsWith('wsp-') && !adopted.has(id)).map((id) => ({ id, madeAt: this.madeAt.get(id) as string }));
  }

  /** Every workspace that exists (tests: nothing leaked). */
  existing(): readonly string[] {
    return [...this.made];
  }

  private make(id: string, limitBytes: number): Workspace {
    this.made.add(id);
    this.limits.set(id, limitBytes);
    this.madeAt.set(id, this.now().toISOString());
    return this.workspace(id);
  }

  private workspace(id: string): Workspace {
    return {
      id,
      mounts: [
        { type: 'volume', source: `berth-ws-${id}-workspace`, target: '/workspace' },
        { type: 'volume', source: `berth-ws-${id}-session`, target: '/mnt/session' },
      ],
    };
  }
}
