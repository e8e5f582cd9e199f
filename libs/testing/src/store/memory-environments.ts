import type { EnvironmentRecord, EnvironmentStore, Page, PageQuery } from '@berth/ports';
import { recordJson } from '@berth/store/shared';
import { pageRows } from './paging';

export class MemoryEnvironments implements EnvironmentStore {
  private readonly environments = new Map<string, EnvironmentRecord>();

  async put(env: EnvironmentRecord): Promise<void> {
    const stored = this.environments.get(env.id);
    const json = recordJson(`environment ${env.id}`, env);
    if (stored && stored.owner_id !== env.owner_id) return;
    this.environments.set(env.id, JSON.parse(json) as EnvironmentRecord);
  }

  async get(ownerId: string, id: string): Promise<EnvironmentRecord | null> {
    const env = this.environments.get(id);
    return env && env.owner_id === ownerId ? structuredClone(env) : null;
  }

  async list(ownerId: string, query: PageQuery & { include_archived?: boolean }): Promise<Page<EnvironmentRecord>> {
    const rows = [...this.environments.values()].filter((e) => e.owner_id === ownerId && !e.deleted && (query.include_archived || e.archived_at === null));
    return structuredClone(pageRows('environments', rows, query, (e) => [e.created_at, e.id]));
  }
}
