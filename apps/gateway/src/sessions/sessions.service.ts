import { IllegalStateError, NotFoundError, type Clock } from '@berth/core';
import {
  agentConfigIssuesFor,
  environmentConfigIssues,
  permissionModeOf,
  readAgentConfig,
  readEnvironmentConfig,
  refuseConfigIssues,
} from '@berth/contracts';
import type { AgentRecord, AgentStore, SessionReadModel, SessionRecord, VaultStore } from '@berth/ports';
import type { SessionUseCases } from '@berth/session-use-cases';
import type { z } from 'zod';
import { agentNotFound } from '../agents/agents.service';
import type { EnvironmentsService } from '../environments/environments.service';
import { DEFAULT_PAGE_LIMIT } from '../http/schemas';
import type { ResourceResolver } from '../resources/resource-resolver';
import type { RouteInput } from '../http/route';
import { renderSession } from './session.render';
import type { SessionCreateBody, SessionRoutes, SessionUpdateBody } from './sessions.schemas';

export type SessionsServiceDeps = Readonly<{
  sessions: SessionReadModel;
  agents: AgentStore;
  environments: EnvironmentsService;
  useCases: SessionUseCases;
  resources: ResourceResolver;
  vaults: Pick<VaultStore, 'get'>;
  clock: Clock;
}>;

/**
 * The HTTP face of the session use cases: resolves the agent and environment a create names,
 * renders records as Managed Agents sessions, and lists (reads come from the read model).
 */
export class SessionsService {
  constructor(private readonly d: SessionsServiceDeps) {}

  find(owner: string, id: string): Promise<SessionRecord> {
    return this.d.useCases.find(owner, id);
  }

  async create(owner: string, body: z.infer<typeof SessionCreateBody>, idempotencyKey: string | undefined) {
    const agent = await this.resolveAgent(owner, body.agent);
    const env = await this.d.environments.find(owner, body.environment_id);
    if (env.archived_at !== null) throw new IllegalStateError('ENVIRONMENT_ARCHIVED', 'the environment is archived');
    // The session runs this agent version on this environment's harness: what it cannot honour is refused now, not dropped.
    const config = readEnvironmentConfig(env.config);
    const agentConfig = readAgentConfig(agent.config);
    refuseConfigIssues(environmentConfigIssues(config), 'environment');
    refuseConfigIssues(agentConfigIssuesFor(agentConfig, config.harness), 'agent');
    const resources = [];
    for (const params of body.resources ?? []) resources.push(await this.d.resources.resolve(owner, params));
    const vaultIds = await this.usableVaults(owner, body.vault_ids ?? []);
    const record = await this.d.useCases.create({
      owner,
      agent: { id: agent.id, version: agent.version },
      environment_id: env.id,
      harness: config.harness,
      permission_mode: permissionModeOf(agentConfig),
      title: body.title ?? null,
      metadata: body.metadata ?? {},
      initial_messages: (body.initial_events ?? []).map((e) => e.content),
      resources,
      vault_ids: vaultIds,
      idempotency_key: idempotencyKey,
    });
    return this.render(record);
  }

  /** The vaults a session pins, each once, in the order given: the owner's own (404 otherwise) and not archived. */
  private async usableVaults(owner: string, ids: readonly string[]): Promise<string[]> {
    const unique = [...new Set(ids)];
    for (const id of unique) {
      const vault = await this.d.vaults.get(owner, id);
      if (vault === null) throw new NotFoundError(`vault ${id} not found`, 'VAULT_NOT_FOUND');
      if (vault.archived_at !== null) throw new IllegalStateError('VAULT_ARCHIVED', `vault ${id} is archived`);
    }
    return unique;
  }

  async list(owner: string, q: RouteInput<typeof SessionRoutes.list>['query']) {
    const created = { gt: q['created_at[gt]'], gte: q['created_at[gte]'], lt: q['created_at[lt]'], lte: q['created_at[lte]'] };
    const page = await this.d.sessions.list(owner, {
      limit: q.limit ?? DEFAULT_PAGE_LIMIT,
      page: q.page ?? null,
      order: q.order ?? 'desc',
      agent_id: q.agent_id,
      agent_version: q.agent_version,
      statuses: q.statuses,
      include_archived: q.include_archived ?? false,
      created_at: Object.values(created).some((v) => v !== undefined) ? created : undefined,
    });
    const agents = new Map<string, Promise<AgentRecord | null>>();
    const agentOf = (r: SessionRecord) => {
      const key = `${r.agent_id}@${r.agent_version}`;
      if (!agents.has(key)) agents.set(key, this.d.agents.get(owner, r.agent_id, r.agent_version));
      return agents.get(key) as Promise<AgentRecord | null>;
    };
    const now = this.d.clock.now();
    const data = await Promise.all(page.data.filter((r) => !r.deleted).map(async (r) => renderSession(r, await agentOf(r), now)));
    return { data, next_page: page.next_page, prev_page: page.prev_page ?? null };
  }

  async get(owner: string, id: string) {
    return this.render(await this.find(owner, id));
  }

  async update(owner: string, id: string, body: z.infer<typeof SessionUpdateBody>) {
    return this.render(await this.d.useCases.update(owner, id, body));
  }

  async archive(owner: string, id: string) {
    return this.render(await this.d.useCases.archive(owner, id));
  }

  async delete(owner: string, id: string) {
    await this.d.useCases.delete(owner, id);
    return { id, type: 'session_deleted' };
  }

  async endConversation(owner: string, id: string) {
    return this.render(await this.d.useCases.endConversation(owner, id));
  }

  async terminate(owner: string, id: string) {
    return this.render(await this.d.useCases.terminate(owner, id));
  }

  async pause(owner: string, id: string) {
    return this.render(await this.d.useCases.pause(owner, id));
  }

  /** The fork, rendered like any session (`berth.forked_from` names where it came from). */
  async fork(owner: string, id: string, at: Readonly<{ event_id?: string; seq?: number }>) {
    return this.render(await this.d.useCases.fork(owner, id, at));
  }

  async resume(owner: string, id: string) {
    return this.render(await this.d.useCases.resume(owner, id));
  }

  /** The kernel's decision comes back as `berth.recover`; with `wait_ms`, how the wait for the new sandbox ended too. */
  async recover(owner: string, id: string, waitMs: number | undefined) {
    const { record, recover, rebuild } = await this.d.useCases.recover(owner, id, { waitMs });
    return this.render(record, { recover: rebuild === undefined ? recover : { ...recover, rebuild } });
  }

  private async resolveAgent(owner: string, ref: z.infer<typeof SessionCreateBody>['agent']): Promise<AgentRecord> {
    const id = typeof ref === 'string' ? ref : ref.id;
    const version = typeof ref === 'string' ? undefined : ref.version;
    const agent = await this.d.agents.get(owner, id, version);
    if (!agent) throw version === undefined ? agentNotFound() : new NotFoundError(`agent ${id} has no version ${version}`, 'AGENT_VERSION_NOT_FOUND');
    const latest = version === undefined ? agent : await this.d.agents.get(owner, id);
    if (latest?.archived_at) throw new IllegalStateError('AGENT_ARCHIVED', 'the agent is archived');
    return agent;
  }

  async render(record: SessionRecord, berth: Readonly<Record<string, unknown>> = {}) {
    const agent = await this.d.agents.get(record.owner_id, record.agent_id, record.agent_version);
    return renderSession(record, agent, this.d.clock.now(), berth);
  }
}
