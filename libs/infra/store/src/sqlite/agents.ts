import { ConcurrencyError } from '@berth/core';
import type { AgentRecord, AgentStore, Page, PageQuery, WebhookOutbox } from '@berth/ports';
import { checkVersionStep } from '../shared/checks';
import { recordJson } from '../shared/limits';
import { checkLimit, decodeCursor, orderOf, pageOf } from '../shared/paging';
import { keysetPage } from './keyset';
import { isConstraintError, type SqliteDb } from './sqlite-db';
import { insertDeliveries } from './webhooks';

/** A version row joined with its agent head (archival and latest update are agent-wide). */
type Row = { record: string; version: number; latest_version: number; updated_at: string; archived_at: string | null };

const SELECT = `SELECT v.record, v.version, a.latest_version, a.updated_at, a.archived_at
  FROM agents a JOIN agent_versions v ON v.id = a.id`;

function recordOf(row: unknown): AgentRecord | null {
  if (!row) return null;
  const r = row as Row;
  const record = JSON.parse(r.record) as AgentRecord;
  return { ...record, archived_at: r.archived_at, updated_at: r.version === r.latest_version ? r.updated_at : record.updated_at };
}

export class SqliteAgents implements AgentStore {
  constructor(private readonly db: SqliteDb) {}

  async putVersion(agent: AgentRecord, expectedVersion: number, webhooks: WebhookOutbox = []): Promise<void> {
    checkVersionStep(agent, expectedVersion);
    const json = recordJson(`agent ${agent.id} version ${agent.version}`, agent);
    try {
      this.db.write(() => {
        if (expectedVersion === 0) {
          this.db
            .stmt('INSERT INTO agents (id, owner_id, latest_version, created_at, updated_at, archived_at) VALUES (?, ?, ?, ?, ?, ?)')
            .run(agent.id, agent.owner_id, agent.version, agent.created_at, agent.updated_at, agent.archived_at);
        } else {
          const moved = this.db
            .stmt('UPDATE agents SET latest_version = ?, updated_at = ? WHERE id = ? AND owner_id = ? AND latest_version = ?')
            .run(agent.version, agent.updated_at, agent.id, agent.owner_id, expectedVersion);
          if (moved.changes !== 1) throw this.conflict(agent.id, expectedVersion);
        }
        this.db.stmt('INSERT INTO agent_versions (id, version, record) VALUES (?, ?, ?)').run(agent.id, agent.version, json);
        insertDeliveries(this.db, webhooks);
      });
    } catch (e) {
      if (isConstraintError(e)) throw this.conflict(agent.id, expectedVersion);
      throw e;
    }
  }

  async get(ownerId: string, id: string, version?: number): Promise<AgentRecord | null> {
    return version === undefined
      ? recordOf(this.db.stmt(`${SELECT} AND v.version = a.latest_version WHERE a.id = ? AND a.owner_id = ?`).get(id, ownerId))
      : recordOf(this.db.stmt(`${SELECT} WHERE a.id = ? AND a.owner_id = ? AND v.version = ?`).get(id, ownerId, version));
  }

  async list(ownerId: string, query: PageQuery & { include_archived?: boolean }): Promise<Page<AgentRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage('agents', order, query.page, 'a');
    const where = ['a.owner_id = ?', ...page.where];
    if (!query.include_archived) where.push('a.archived_at IS NULL');
    const rows = this.db
      .stmt(`${SELECT} AND v.version = a.latest_version WHERE ${where.join(' AND ')} ${page.orderBy} LIMIT ?`)
      .all(ownerId, ...page.params, limit + 1);
    return pageOf('agents', order, limit, rows.map((r) => recordOf(r) as AgentRecord), (a) => [a.created_at, a.id]);
  }

  async listVersions(ownerId: string, id: string, query: PageQuery): Promise<Page<AgentRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const list = `agent_versions:${id}`;
    const after = decodeCursor(list, order, query.page);
    const dir = order === 'asc' ? 'ASC' : 'DESC';
    const where = ['a.id = ?', 'a.owner_id = ?'];
    const params: unknown[] = [id, ownerId];
    if (after) {
      where.push(`v.version ${order === 'asc' ? '>' : '<'} ?`);
      params.push(after[0]);
    }
    const rows = this.db.stmt(`${SELECT} WHERE ${where.join(' AND ')} ORDER BY v.version ${dir} LIMIT ?`).all(...params, limit + 1);
    return pageOf(list, order, limit, rows.map((r) => recordOf(r) as AgentRecord), (a) => [a.version]);
  }

  async archive(ownerId: string, id: string, at: string, webhooks: WebhookOutbox = []): Promise<AgentRecord | null> {
    this.db.write(() => {
      const archived = this.db.stmt('UPDATE agents SET archived_at = ?, updated_at = ? WHERE id = ? AND owner_id = ? AND archived_at IS NULL').run(at, at, id, ownerId).changes === 1;
      if (archived) insertDeliveries(this.db, webhooks);
    });
    return this.get(ownerId, id);
  }

  private conflict(id: string, expectedVersion: number): ConcurrencyError {
    return new ConcurrencyError(`agent ${id} is no longer at version ${expectedVersion}`);
  }
}
