import {
  agentConfigAfterUpdate,
  agentConfigFromCreate,
  agentConfigIssues,
  readAgentConfig,
  refuseConfigIssues,
  type AgentConfig,
  type AgentCreateParams,
  type AgentUpdateParams,
} from '@berth/contracts';
import { ConcurrencyError, ErrorCodes, IllegalStateError, NotFoundError, type Clock, type IdGenerator } from '@berth/core';
import type { AgentRecord, AgentStore } from '@berth/ports';
import { DEFAULT_PAGE_LIMIT } from '../http/schemas';
import { renderAgent } from './agent.render';
import type { AgentRoutes } from './agents.schemas';
import type { RouteInput } from '../http/route';
import type { ResourceWebhooks } from '../webhooks/delivery/resource-webhooks';

export const agentNotFound = () => new NotFoundError('agent not found', 'AGENT_NOT_FOUND');

/**
 * Agents are plain versioned configuration: written straight to the store, no kernel involved.
 * A version Berth could not honour (skills, custom tools, …) is refused before it is stored.
 */
export class AgentsService {
  constructor(
    private readonly agents: AgentStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly webhooks: Pick<ResourceWebhooks, 'plan'>,
  ) {}

  async create(owner: string, body: AgentCreateParams) {
    return renderAgent(await this.createFrom(owner, body.name, agentConfigFromCreate(body)));
  }

  /**
   * A new agent at version 1 with this stored config (a create, or an import recreating an archived agent version), refused as a
   * create refuses it. `id`: an import's, named from its Idempotency-Key.
   */
  async createFrom(owner: string, name: string, config: AgentConfig, id = this.ids.next('agent')): Promise<AgentRecord> {
    const now = this.clock.now().toISOString();
    refuseConfigIssues(agentConfigIssues(config));
    const record: AgentRecord = {
      id,
      owner_id: owner,
      version: 1,
      name,
      config,
      created_at: now,
      updated_at: now,
      archived_at: null,
    };
    await this.agents.putVersion(record, 0, await this.webhooks.plan({ type: 'agent.created', id: record.id, ownerId: owner, at: now, version: 1 }));
    return record;
  }

  async list(owner: string, query: RouteInput<typeof AgentRoutes.list>['query']) {
    const page = await this.agents.list(owner, { limit: query.limit ?? DEFAULT_PAGE_LIMIT, page: query.page ?? null, include_archived: query.include_archived ?? false });
    const gte = query['created_at[gte]'];
    const lte = query['created_at[lte]'];
    const data = page.data.filter((a) => (!gte || Date.parse(a.created_at) >= Date.parse(gte)) && (!lte || Date.parse(a.created_at) <= Date.parse(lte)));
    return { data: data.map(renderAgent), next_page: page.next_page };
  }

  async get(owner: string, id: string, version?: number) {
    const agent = await this.agents.get(owner, id, version);
    if (!agent) throw version === undefined ? agentNotFound() : new NotFoundError(`agent ${id} has no version ${version}`, 'AGENT_VERSION_NOT_FOUND');
    return renderAgent(agent);
  }

  async update(owner: string, id: string, body: AgentUpdateParams) {
    const current = await this.agents.get(owner, id);
    if (!current) throw agentNotFound();
    if (current.archived_at !== null) throw new IllegalStateError('AGENT_ARCHIVED', 'an archived agent cannot be updated');
    if (body.version !== undefined && body.version !== current.version) {
      throw new IllegalStateError(ErrorCodes.VERSION_CONFLICT, `agent is at version ${current.version}, not ${body.version}`, { current_version: current.version });
    }
    const stored = readAgentConfig(current.config);
    const next = agentConfigAfterUpdate(stored, body);
    const name = body.name ?? current.name;
    // An update that changes nothing does not mint a version.
    if (name === current.name && JSON.stringify(next) === JSON.stringify(agentConfigAfterUpdate(stored, {}))) return renderAgent(current);
    refuseConfigIssues(agentConfigIssues(next));
    const record: AgentRecord = { ...current, version: current.version + 1, name, config: next, updated_at: this.clock.now().toISOString() };
    const webhooks = await this.webhooks.plan({ type: 'agent.updated', id: record.id, ownerId: owner, at: record.updated_at, version: record.version });
    try {
      await this.agents.putVersion(record, current.version, webhooks);
    } catch (error) {
      if (error instanceof ConcurrencyError) throw new IllegalStateError(ErrorCodes.VERSION_CONFLICT, 'agent was updated concurrently; retry with the new version');
      throw error;
    }
    return renderAgent(record);
  }

  async archive(owner: string, id: string) {
    const current = await this.agents.get(owner, id);
    if (!current) throw agentNotFound();
    if (current.archived_at !== null) return renderAgent(current);
    const at = this.clock.now().toISOString();
    const archived = await this.agents.archive(owner, id, at, await this.webhooks.plan({ type: 'agent.archived', id, ownerId: owner, at }));
    if (!archived) throw agentNotFound();
    return renderAgent(archived);
  }

  async versions(owner: string, id: string, query: RouteInput<typeof AgentRoutes.versions>['query']) {
    if (!(await this.agents.get(owner, id))) throw agentNotFound();
    const page = await this.agents.listVersions(owner, id, { limit: query.limit ?? DEFAULT_PAGE_LIMIT, page: query.page ?? null });
    return { data: page.data.map(renderAgent), next_page: page.next_page };
  }
}
