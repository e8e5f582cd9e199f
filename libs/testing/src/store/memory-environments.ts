import { ConcurrencyError } from '@berth/core';
import type { EnvironmentRecord, EnvironmentStore, Page, PageQuery, WebhookOutbox } from '@berth/ports';
import { recordJson } from '@berth/store/shared';
import { pageRows } from './paging';
import type { MemoryWebhooks } from './memory-webhooks';

export class MemoryEnvironments implements EnvironmentStore {
  private readonly environments = new Map<string, EnvironmentRecord>();

  constructor(private readonly webhooks: MemoryWebhooks) {}

  async insert(env: EnvironmentRecord, webhooks: WebhookOutbox = []): Promise<void> {
    if (this.environments.has(env.id)) throw new ConcurrencyError(`environment ${env.id} already exists`);
    await this.put(env, webhooks);
  }

  async put(env: EnvironmentRecord, webhooks: WebhookOutbox = []): Promise<void> {
    const stored = this.environments.get(env.id);
    const json = recordJson(`environment ${env.id}`, env);
    if (stored && stored.owner_id !== env.owner_id) return;
    this.webhooks.withDeliveries(webhooks, () => {
      this.environments.set(env.id, JSON.parse(json) as EnvironmentRecord);
      return true;
    });
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
