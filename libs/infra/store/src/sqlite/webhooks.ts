import { ConcurrencyError } from '@berth/core';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '@berth/contracts';
import type { Page, PageQuery, WebhookDeliveryClaim, WebhookDeliveryListQuery, WebhookDeliveryStore, WebhookEndpointStore, WebhookOutbox } from '@berth/ports';
import { checkLimit, orderOf, pageOf } from '../shared/paging';
import { keysetPage } from './keyset';
import { isConstraintError, type SqliteDb } from './sqlite-db';

const parse = <T>(row: unknown): T | null => (row ? (JSON.parse((row as { record: string }).record) as T) : null);

/** Inserts each delivery whose id is not stored yet, inside the caller's transaction (a configuration write, or `enqueue`); how many were new. */
export function insertDeliveries(db: SqliteDb, deliveries: WebhookOutbox): number {
  let added = 0;
  for (const d of deliveries) {
    added += db
      .stmt(
        `INSERT INTO webhook_deliveries (id, owner_id, endpoint_id, subject, position, state, next_attempt_at, lease_until, created_at, record)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
      )
      .run(d.id, d.owner_id, d.endpoint_id, d.subject, d.position, d.state, d.next_attempt_at, d.lease?.until ?? null, d.created_at, JSON.stringify(d)).changes;
  }
  return added;
}

/** A claimable delivery, with its endpoint's backoff (set while the endpoint is failing). */
type Candidate = { record: string; endpoint_id: string; expired: number; retry_at: string | null };

export class SqliteWebhookEndpoints implements WebhookEndpointStore {
  constructor(private readonly db: SqliteDb) {}

  async insert(endpoint: WebhookEndpointRecord): Promise<void> {
    try {
      this.db
        .stmt('INSERT INTO webhook_endpoints (id, owner_id, state, version, created_at, record) VALUES (?, ?, ?, ?, ?, ?)')
        .run(endpoint.id, endpoint.owner_id, endpoint.state, endpoint.version, endpoint.created_at, JSON.stringify(endpoint));
    } catch (e) {
      if (isConstraintError(e)) throw new ConcurrencyError(`webhook endpoint ${endpoint.id} already exists`);
      throw e;
    }
  }

  async get(ownerId: string, id: string): Promise<WebhookEndpointRecord | null> {
    return parse(this.db.stmt('SELECT record FROM webhook_endpoints WHERE id = ? AND owner_id = ?').get(id, ownerId));
  }

  async getById(id: string): Promise<WebhookEndpointRecord | null> {
    return parse(this.db.stmt('SELECT record FROM webhook_endpoints WHERE id = ?').get(id));
  }

  async list(ownerId: string, query: PageQuery): Promise<Page<WebhookEndpointRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage('webhooks', order, query.page);
    const where = ['owner_id = ?', ...page.where].join(' AND ');
    const rows = this.db.stmt(`SELECT record FROM webhook_endpoints WHERE ${where} ${page.orderBy} LIMIT ?`).all(ownerId, ...page.params, limit + 1);
    return pageOf('webhooks', order, limit, rows.map((r) => parse<WebhookEndpointRecord>(r) as WebhookEndpointRecord), (e) => [e.created_at, e.id]);
  }

  async allOf(ownerId: string): Promise<readonly WebhookEndpointRecord[]> {
    const rows = this.db.stmt('SELECT record FROM webhook_endpoints WHERE owner_id = ? ORDER BY created_at, id').all(ownerId);
    return rows.map((r) => parse<WebhookEndpointRecord>(r) as WebhookEndpointRecord);
  }

  async count(ownerId: string): Promise<number> {
    return (this.db.stmt('SELECT COUNT(*) AS n FROM webhook_endpoints WHERE owner_id = ?').get(ownerId) as { n: number }).n;
  }

  async update(endpoint: WebhookEndpointRecord, expectedVersion: number): Promise<void> {
    const result = this.db
      .stmt('UPDATE webhook_endpoints SET state = ?, version = ?, record = ? WHERE id = ? AND owner_id = ? AND version = ?')
      .run(endpoint.state, endpoint.version, JSON.stringify(endpoint), endpoint.id, endpoint.owner_id, expectedVersion);
    if (result.changes !== 1) throw new ConcurrencyError(`webhook endpoint ${endpoint.id} is not at version ${expectedVersion}`);
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    return this.db.write(() => {
      const removed = this.db.stmt('DELETE FROM webhook_endpoints WHERE id = ? AND owner_id = ?').run(id, ownerId).changes === 1;
      if (removed) {
        this.db.stmt('DELETE FROM webhook_deliveries WHERE endpoint_id = ?').run(id);
        this.db.stmt('DELETE FROM webhook_probes WHERE endpoint_id = ?').run(id);
      }
      return removed;
    });
  }
}

export class SqliteWebhookDeliveries implements WebhookDeliveryStore {
  constructor(private readonly db: SqliteDb) {}

  async enqueue(deliveries: readonly WebhookDeliveryRecord[]): Promise<number> {
    return this.db.write(() => insertDeliveries(this.db, deliveries));
  }

  async get(ownerId: string, endpointId: string, id: string): Promise<WebhookDeliveryRecord | null> {
    return parse(this.db.stmt('SELECT record FROM webhook_deliveries WHERE id = ? AND endpoint_id = ? AND owner_id = ?').get(id, endpointId, ownerId));
  }

  async list(ownerId: string, endpointId: string, query: WebhookDeliveryListQuery): Promise<Page<WebhookDeliveryRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage(`webhook_deliveries:${endpointId}`, order, query.page);
    const where = ['endpoint_id = ?', 'owner_id = ?', ...(query.state ? ['state = ?'] : []), ...page.where].join(' AND ');
    const params = [endpointId, ownerId, ...(query.state ? [query.state] : []), ...page.params];
    const rows = this.db.stmt(`SELECT record FROM webhook_deliveries WHERE ${where} ${page.orderBy} LIMIT ?`).all(...params, limit + 1);
    return pageOf(`webhook_deliveries:${endpointId}`, order, limit, rows.map((r) => parse<WebhookDeliveryRecord>(r) as WebhookDeliveryRecord), (d) => [d.created_at, d.id]);
  }

  async claimDue(claim: WebhookDeliveryClaim): Promise<readonly WebhookDeliveryRecord[]> {
    const { now, expiredBy, token, leaseUntil, limit } = claim;
    return this.db.write(() => {
      // Up to four times the limit: a failing endpoint's deliveries past its first are skipped below.
      const rows = this.db
        .stmt(
          `SELECT d.record, d.endpoint_id, d.created_at <= @expiredBy AS expired, json_extract(w.record, '$.next_retry_at') AS retry_at
           FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
           WHERE d.state = 'pending' AND (d.lease_until IS NULL OR d.lease_until <= @now)
             AND (d.created_at <= @expiredBy OR (
               d.next_attempt_at <= @now AND w.state = 'enabled'
               AND (json_extract(w.record, '$.next_retry_at') IS NULL OR (json_extract(w.record, '$.next_retry_at') <= @now
                 AND NOT EXISTS (SELECT 1 FROM webhook_probes p WHERE p.endpoint_id = d.endpoint_id AND p.until > @now)))
               AND (d.subject IS NULL OR NOT EXISTS (
                 SELECT 1 FROM webhook_deliveries e
                 WHERE e.state = 'pending' AND e.endpoint_id = d.endpoint_id AND e.subject = d.subject AND e.position < d.position))))
           ORDER BY d.next_attempt_at, d.position LIMIT @scan`,
        )
        .all({ now, expiredBy, scan: limit * 4 }) as Candidate[];
      const probed = new Set<string>();
      const claimed: WebhookDeliveryRecord[] = [];
      for (const row of rows) {
        if (claimed.length >= limit) break;
        const probe = !row.expired && row.retry_at !== null;
        if (probe && probed.has(row.endpoint_id)) continue;
        const leased: WebhookDeliveryRecord = { ...(parse<WebhookDeliveryRecord>(row) as WebhookDeliveryRecord), lease: { token, until: leaseUntil } };
        this.db.stmt('UPDATE webhook_deliveries SET lease_until = ?, record = ? WHERE id = ?').run(leaseUntil, JSON.stringify(leased), leased.id);
        if (probe) {
          probed.add(row.endpoint_id);
          this.db.stmt('INSERT INTO webhook_probes (endpoint_id, delivery_id, until) VALUES (?, ?, ?) ON CONFLICT (endpoint_id) DO UPDATE SET delivery_id = excluded.delivery_id, until = excluded.until').run(row.endpoint_id, leased.id, leaseUntil);
        }
        claimed.push(leased);
      }
      return claimed;
    });
  }

  async settle(delivery: WebhookDeliveryRecord, token: string): Promise<boolean> {
    return this.db.write(() => {
      const stored = parse<WebhookDeliveryRecord>(this.db.stmt('SELECT record FROM webhook_deliveries WHERE id = ?').get(delivery.id));
      if (stored?.lease?.token !== token) return false;
      const settled: WebhookDeliveryRecord = { ...delivery, lease: null };
      this.db
        .stmt('UPDATE webhook_deliveries SET state = ?, next_attempt_at = ?, lease_until = NULL, record = ? WHERE id = ?')
        .run(settled.state, settled.next_attempt_at, JSON.stringify(settled), settled.id);
      this.db.stmt('DELETE FROM webhook_probes WHERE endpoint_id = ? AND delivery_id = ?').run(settled.endpoint_id, settled.id);
      return true;
    });
  }

  async prune(before: string): Promise<number> {
    return this.db.stmt("DELETE FROM webhook_deliveries WHERE state <> 'pending' AND created_at < ?").run(before).changes;
  }
}
