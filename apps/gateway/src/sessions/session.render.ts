import type { AgentRecord, SessionRecord } from '@berth/ports';
import { renderSessionAgent } from '../agents/agent.render';

const STATUSES = new Set(['rescheduling', 'running', 'idle', 'terminated']);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const numbers = (o: Record<string, unknown>): Record<string, number> =>
  Object.fromEntries(Object.entries(o).filter((e): e is [string, number] => typeof e[1] === 'number'));

/** Cumulative token usage, in the Managed Agents field names. */
function renderUsage(view: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const usage = isObject(view.usage) ? numbers(view.usage) : {};
  const { cache_creation_input_tokens, ...rest } = usage;
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_input_tokens: 0,
    ...rest,
    ...(cache_creation_input_tokens !== undefined ? { cache_creation: { ephemeral_5m_input_tokens: cache_creation_input_tokens } } : {}),
  };
}

/**
 * `BetaManagedAgentsSession`, from the read model the kernel maintains. Berth's own state (lifecycle,
 * conversation, sandbox, recovery…, whatever the kernel's view carries) is under `berth`, with the
 * journal position as `berth.last_seq`, plus what a route adds there (recover's decision).
 */
export function renderSession(record: SessionRecord, agent: AgentRecord | null, now: Date, berth: Readonly<Record<string, unknown>> = {}): Record<string, unknown> {
  const view = record.view ?? {};
  const stats = isObject(view.stats) ? numbers(view.stats) : {};
  const duration = Math.max(0, Math.floor((now.getTime() - Date.parse(record.created_at)) / 1000));
  return {
    type: 'session',
    id: record.id,
    status: STATUSES.has(record.status) ? record.status : 'idle',
    agent: agent ? renderSessionAgent(agent) : { type: 'agent', id: record.agent_id, version: record.agent_version },
    environment_id: record.environment_id,
    title: record.title,
    metadata: record.metadata,
    resources: Array.isArray(view.resources) ? view.resources : [],
    vault_ids: Array.isArray(view.vault_ids) ? view.vault_ids : [],
    budget: null,
    outcome_evaluations: [],
    usage: renderUsage(view),
    stats: { duration_seconds: duration, ...stats },
    created_at: record.created_at,
    updated_at: record.updated_at,
    archived_at: record.archived_at,
    berth: { last_seq: record.last_seq, ...view, ...berth },
  };
}
