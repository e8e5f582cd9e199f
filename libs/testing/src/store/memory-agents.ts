import { ConcurrencyError } from '@berth/core';
import type { AgentRecord, AgentStore, Page, PageQuery, WebhookOutbox } from '@berth/ports';
import { checkVersionStep, recordJson } from '@berth/store/shared';
import { pageRows } from './paging';
import type { MemoryWebhooks } from './memory-webhooks';

type Agent = { owner_id: string; created_at: string; updated_at: string; archived_at: string | null; versions: AgentRecord[] };

export class MemoryAgents implements AgentStore {
  private readonly agents = new Map<string, Agent>();

  constructor(private readonly webhooks: MemoryWebhooks) {}

  async putVersion(agent: AgentRecord, expectedVersion: number, webhooks: WebhookOutbox = []): Promise<void> {
    checkVersionStep(agent, expectedVersion);
    const json = recordJson(`agent ${agent.id} version ${agent.version}`, agent);
    const stored = this.agents.get(agent.id);
    const latest = stored?.versions.length ?? 0;
    if (latest !== expectedVersion || (stored && stored.owner_id !== agent.owner_id)) {
      throw new ConcurrencyError(`agent ${agent.id} is no longer at version ${expectedVersion}`);
    }
    const copy = JSON.parse(json) as AgentRecord;
    this.webhooks.withDeliveries(webhooks, () => {
      if (stored) {
        stored.versions.push(copy);
        stored.updated_at = agent.updated_at;
      } else {
        this.agents.set(agent.id, { owner_id: agent.owner_id, created_at: agent.created_at, updated_at: agent.updated_at, archived_at: agent.archived_at, versions: [copy] });
      }
      return true;
    });
  }

  async get(ownerId: string, id: string, version?: number): Promise<AgentRecord | null> {
    const agent = this.owned(ownerId, id);
    if (!agent) return null;
    const v = version ?? agent.versions.length;
    return agent.versions[v - 1] ? this.view(agent, v) : null;
  }

  async list(ownerId: string, query: PageQuery & { include_archived?: boolean }): Promise<Page<AgentRecord>> {
    const rows = [...this.agents.values()]
      .filter((a) => a.owner_id === ownerId && (query.include_archived || a.archived_at === null))
      .map((a) => this.view(a, a.versions.length));
    return pageRows('agents', rows, query, (a) => [a.created_at, a.id]);
  }

  async listVersions(ownerId: string, id: string, query: PageQuery): Promise<Page<AgentRecord>> {
    const agent = this.owned(ownerId, id);
    const rows = agent ? agent.versions.map((v) => this.view(agent, v.version)) : [];
    return pageRows(`agent_versions:${id}`, rows, query, (a) => [a.version]);
  }

  async archive(ownerId: string, id: string, at: string, webhooks: WebhookOutbox = []): Promise<AgentRecord | null> {
    const agent = this.owned(ownerId, id);
    if (!agent) return null;
    this.webhooks.withDeliveries(webhooks, () => {
      if (agent.archived_at !== null) return false;
      agent.archived_at = at;
      agent.updated_at = at;
      return true;
    });
    return this.view(agent, agent.versions.length);
  }

  /** For the inspection: each agent's latest version and how many it stores. */
  extents(): readonly { agent_id: string; latest_version: number; versions: number; max_version: number }[] {
    return [...this.agents].map(([agent_id, a]) => ({ agent_id, latest_version: a.versions.length, versions: a.versions.length, max_version: a.versions.length }));
  }

  private owned(ownerId: string, id: string): Agent | null {
    const agent = this.agents.get(id);
    return agent && agent.owner_id === ownerId ? agent : null;
  }

  /** Archival and the latest update are agent-wide, as in the database adapters. */
  private view(agent: Agent, version: number): AgentRecord {
    const record = agent.versions[version - 1] as AgentRecord;
    return structuredClone({ ...record, archived_at: agent.archived_at, updated_at: version === agent.versions.length ? agent.updated_at : record.updated_at });
  }
}
