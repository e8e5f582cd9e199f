import { createHash } from 'node:crypto';
import { BerthError, ErrorCodes, IllegalStateError, NotFoundError, type Clock, type IdGenerator } from '@berth/core';
import {
  agentConfigIssuesFor,
  environmentConfigIssues,
  permissionModeOf,
  readAgentConfig,
  readEnvironmentConfig,
  refuseConfigIssues,
} from '@berth/contracts';
import type { AgentRecord, AgentStore, IdempotencyKeys, SessionJournal, SessionReadModel, SessionRecord } from '@berth/ports';
import type { z } from 'zod';
import { agentNotFound } from '../agents/agents.service';
import type { EnvironmentsService } from '../environments/environments.service';
import { DEFAULT_PAGE_LIMIT } from '../http/schemas';
import type { RouteInput } from '../http/route';
import { recoverResult } from './recover-result';
import type { ProbeTarget, SandboxProbe } from './sandbox-probe.port';
import type { SessionCommands } from './session-commands';
import { renderSession } from './session.render';
import type { SessionCreateBody, SessionRoutes, SessionUpdateBody } from './sessions.schemas';

export const sessionNotFound = () => new NotFoundError('session not found', 'SESSION_NOT_FOUND');

export type SessionsServiceDeps = Readonly<{
  sessions: SessionReadModel;
  agents: AgentStore;
  environments: EnvironmentsService;
  idempotency: IdempotencyKeys;
  commands: SessionCommands;
  /** Read back what a recover decided (the command's outcome lists event types, not their data). */
  journal: Pick<SessionJournal, 'eventsOfCommand'>;
  probe: SandboxProbe;
  clock: Clock;
  ids: IdGenerator;
}>;

/** How long a write waits for the read model to show what the kernel just committed. */
const PROJECTION_WAIT_MS = 2_000;

/** Command ids of an idempotent create are derived from (owner, key): a retried create is deduplicated by the kernel. */
const idempotentCommandId = (owner: string, key: string): string =>
  `cmd_idem_${createHash('sha256').update(`${owner}\u0000${key}`).digest('hex').slice(0, 40)}`;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** The sandbox binding the kernel's view records (absent or malformed → none). */
function probeTarget(record: SessionRecord): ProbeTarget {
  const { sandbox } = record.view;
  const bound = isObject(sandbox) && typeof sandbox.generation === 'number' ? { generation: sandbox.generation, expires_at: typeof sandbox.expires_at === 'string' ? sandbox.expires_at : null } : null;
  return { sessionId: record.id, sandbox: bound };
}

/** Session writes become kernel commands; reads come from the read model the kernel maintains. */
export class SessionsService {
  constructor(private readonly d: SessionsServiceDeps) {}

  /** The caller's live session, or 404 (another owner's id and a deleted session look the same). */
  async find(owner: string, id: string): Promise<SessionRecord> {
    const record = await this.d.sessions.get(owner, id);
    if (!record || record.deleted) throw sessionNotFound();
    return record;
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

    let sessionId: string = this.d.ids.next('sesn');
    if (idempotencyKey !== undefined) {
      const held = await this.d.idempotency.claim({ owner_id: owner, key: idempotencyKey, subject: agent.id, session_id: sessionId, created_at: this.d.clock.now().toISOString() });
      if (held.subject !== agent.id) {
        throw new IllegalStateError(ErrorCodes.IDEMPOTENCY_KEY_CONFLICT, 'this Idempotency-Key was already used to create a session for another agent');
      }
      sessionId = held.session_id;
      const existing = await this.d.sessions.get(owner, sessionId);
      if (existing) return this.render(existing);
    }

    const baseId = idempotencyKey !== undefined ? idempotentCommandId(owner, idempotencyKey) : undefined;
    const outcome = await this.d.commands.send(
      owner,
      sessionId,
      'CreateSession',
      {
        owner_id: owner,
        agent: { id: agent.id, version: agent.version },
        environment_id: env.id,
        harness: config.harness,
        title: body.title ?? null,
        metadata: body.metadata ?? {},
        idempotency_key: idempotencyKey ?? null,
        permission_mode: permissionModeOf(agentConfig),
      },
      baseId,
    );
    let lastSeq = outcome.last_seq;
    for (const [index, event] of (body.initial_events ?? []).entries()) {
      const sent = await this.d.commands.send(owner, sessionId, 'SubmitUserMessage', { turn_id: this.d.ids.next('turn'), content: event.content }, baseId && `${baseId}_m${index}`);
      lastSeq = sent.last_seq;
    }
    return this.render(await this.readAfter(owner, sessionId, lastSeq));
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
    const record = await this.find(owner, id);
    const metadata = body.metadata === null ? Object.fromEntries(Object.keys(record.metadata).map((k) => [k, null])) : body.metadata;
    if (body.title === undefined && (metadata === undefined || Object.keys(metadata).length === 0)) return this.render(record);
    const outcome = await this.d.commands.send(owner, id, 'UpdateSession', {
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(metadata !== undefined ? { metadata } : {}),
    });
    return this.render(await this.readAfter(owner, id, outcome.last_seq));
  }

  async archive(owner: string, id: string) {
    await this.find(owner, id);
    const outcome = await this.d.commands.send(owner, id, 'ArchiveSession', {});
    return this.render(await this.readAfter(owner, id, outcome.last_seq));
  }

  async delete(owner: string, id: string) {
    await this.find(owner, id);
    await this.d.commands.send(owner, id, 'DeleteSession', {});
    return { id, type: 'session_deleted' };
  }

  async terminate(owner: string, id: string) {
    await this.find(owner, id);
    const outcome = await this.d.commands.send(owner, id, 'TerminateSession', {});
    return this.render(await this.readAfter(owner, id, outcome.last_seq));
  }

  /**
   * Probes the sandbox first: the kernel's recover decision is pure and needs the facts. The
   * session comes back with the decision (outcome, reason) as `berth.recover`.
   */
  async recover(owner: string, id: string) {
    const record = await this.find(owner, id);
    const probe = await this.d.probe.probe(probeTarget(record));
    const outcome = await this.d.commands.send(owner, id, 'RecoverSession', { probe });
    const after = await this.readAfter(owner, id, outcome.last_seq);
    const recover = recoverResult(await this.d.journal.eventsOfCommand(id, outcome.command_id), after.view.lifecycle);
    return this.render(after, { recover });
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

  private async render(record: SessionRecord, berth: Readonly<Record<string, unknown>> = {}) {
    const agent = await this.d.agents.get(record.owner_id, record.agent_id, record.agent_version);
    return renderSession(record, agent, this.d.clock.now(), berth);
  }

  /** The read model once it reflects `seq` (the kernel projects after commit; this bounds the lag). */
  private async readAfter(owner: string, id: string, seq: number): Promise<SessionRecord> {
    const deadline = Date.now() + PROJECTION_WAIT_MS;
    for (;;) {
      const record = await this.d.sessions.get(owner, id);
      if (record && record.last_seq >= seq) return record;
      if (Date.now() > deadline) {
        if (record) return record;
        throw new BerthError(ErrorCodes.UNAVAILABLE, 503, 'the session was accepted but is not visible yet; retry the read');
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }
}
