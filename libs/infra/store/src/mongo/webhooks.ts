import { ConcurrencyError } from '@berth/core';
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '@berth/contracts';
import type { Page, PageQuery, WebhookDeliveryClaim, WebhookDeliveryListQuery, WebhookDeliveryStore, WebhookEndpointStore, WebhookOutbox } from '@berth/ports';
import type { ClientSession, Filter } from 'mongodb';
import { checkLimit, orderOf, pageOf } from '../shared/paging';
import type { Collections, WebhookDeliveryDoc, WebhookEndpointDoc } from './collections';
import type { MongoContext } from './context';
import { isDuplicateOn } from './errors';
import { keysetPage } from './keyset';

const parse = <T>(doc: { record: string } | null): T | null => (doc ? (JSON.parse(doc.record) as T) : null);

const endpointDoc = (e: WebhookEndpointRecord): WebhookEndpointDoc => ({
  _id: e.id,
  owner_id: e.owner_id,
  state: e.state,
  version: e.version,
  created_at: e.created_at,
  next_retry_at: e.next_retry_at ?? null,
  record: JSON.stringify(e),
});

const deliveryDoc = (d: WebhookDeliveryRecord): WebhookDeliveryDoc => ({
  _id: d.id,
  owner_id: d.owner_id,
  endpoint_id: d.endpoint_id,
  subject: d.subject,
  position: d.position,
  state: d.state,
  next_attempt_at: d.next_attempt_at,
  lease_until: d.lease?.until ?? null,
  lease_token: d.lease?.token ?? null,
  created_at: d.created_at,
  record: JSON.stringify(d),
});

/** Inserts each delivery whose id is not stored yet (in `session`'s transaction, when given); how many were new. */
export async function insertDeliveries(c: Collections, deliveries: WebhookOutbox, session?: ClientSession): Promise<number> {
  let added = 0;
  for (const d of deliveries) {
    const { _id, ...fields } = deliveryDoc(d);
    try {
      added += (await c.webhookDeliveries.updateOne({ _id }, { $setOnInsert: fields }, { upsert: true, session })).upsertedCount;
    } catch (e) {
      // A racing enqueue of the same delivery inserted it first.
      if (!isDuplicateOn(e, '_id_')) throw e;
    }
  }
  return added;
}

/**
 * A configuration write and its webhook deliveries in one transaction: `write` says whether it
 * changed anything, and only then are the deliveries stored. Without deliveries, no transaction.
 */
export async function writeWithWebhooks(m: MongoContext, webhooks: WebhookOutbox, write: (session?: ClientSession) => Promise<boolean>): Promise<boolean> {
  if (webhooks.length === 0) return write();
  return m.transaction(async (session) => {
    const changed = await write(session);
    if (changed) await insertDeliveries(m.c, webhooks, session);
    return changed;
  });
}

/** No probe is out, or it ran out. */
const probeFree = (now: string): Filter<WebhookEndpointDoc> => ({ $or: [{ probe_until: null }, { probe_until: { $lte: now } }] });

export class MongoWebhookEndpoints implements WebhookEndpointStore {
  constructor(private readonly c: Collections) {}

  async insert(endpoint: WebhookEndpointRecord): Promise<void> {
    try {
      await this.c.webhookEndpoints.insertOne(endpointDoc(endpoint));
    } catch (e) {
      if (isDuplicateOn(e, '_id_')) throw new ConcurrencyError(`webhook endpoint ${endpoint.id} already exists`);
      throw e;
    }
  }

  async get(ownerId: string, id: string): Promise<WebhookEndpointRecord | null> {
    return parse(await this.c.webhookEndpoints.findOne({ _id: id, owner_id: ownerId }));
  }

  async getById(id: string): Promise<WebhookEndpointRecord | null> {
    return parse(await this.c.webhookEndpoints.findOne({ _id: id }));
  }

  async list(ownerId: string, query: PageQuery): Promise<Page<WebhookEndpointRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const page = keysetPage<WebhookEndpointDoc>('webhooks', order, query.page);
    const docs = await this.c.webhookEndpoints.find({ $and: [{ owner_id: ownerId }, ...page.filter] }).sort(page.sort).limit(limit + 1).toArray();
    return pageOf('webhooks', order, limit, docs.map((d) => parse<WebhookEndpointRecord>(d) as WebhookEndpointRecord), (e) => [e.created_at, e.id]);
  }

  async allOf(ownerId: string): Promise<readonly WebhookEndpointRecord[]> {
    const docs = await this.c.webhookEndpoints.find({ owner_id: ownerId }).sort({ created_at: 1, _id: 1 }).toArray();
    return docs.map((d) => parse<WebhookEndpointRecord>(d) as WebhookEndpointRecord);
  }

  async count(ownerId: string): Promise<number> {
    return this.c.webhookEndpoints.countDocuments({ owner_id: ownerId });
  }

  async update(endpoint: WebhookEndpointRecord, expectedVersion: number): Promise<void> {
    const { _id, ...fields } = endpointDoc(endpoint);
    const result = await this.c.webhookEndpoints.updateOne({ _id, owner_id: endpoint.owner_id, version: expectedVersion }, { $set: fields });
    if (result.matchedCount !== 1) throw new ConcurrencyError(`webhook endpoint ${endpoint.id} is not at version ${expectedVersion}`);
  }

  async delete(ownerId: string, id: string): Promise<boolean> {
    const removed = (await this.c.webhookEndpoints.deleteOne({ _id: id, owner_id: ownerId })).deletedCount === 1;
    if (removed) await this.c.webhookDeliveries.deleteMany({ endpoint_id: id });
    return removed;
  }
}

export class MongoWebhookDeliveries implements WebhookDeliveryStore {
  constructor(private readonly c: Collections) {}

  async enqueue(deliveries: readonly WebhookDeliveryRecord[]): Promise<number> {
    return insertDeliveries(this.c, deliveries);
  }

  async get(ownerId: string, endpointId: string, id: string): Promise<WebhookDeliveryRecord | null> {
    return parse(await this.c.webhookDeliveries.findOne({ _id: id, endpoint_id: endpointId, owner_id: ownerId }));
  }

  async list(ownerId: string, endpointId: string, query: WebhookDeliveryListQuery): Promise<Page<WebhookDeliveryRecord>> {
    const limit = checkLimit(query.limit);
    const order = orderOf(query.order);
    const list = `webhook_deliveries:${endpointId}`;
    const page = keysetPage<WebhookDeliveryDoc>(list, order, query.page);
    const and: Filter<WebhookDeliveryDoc>[] = [{ endpoint_id: endpointId, owner_id: ownerId }, ...page.filter];
    if (query.state) and.push({ state: query.state });
    const docs = await this.c.webhookDeliveries.find({ $and: and }).sort(page.sort).limit(limit + 1).toArray();
    return pageOf(list, order, limit, docs.map((d) => parse<WebhookDeliveryRecord>(d) as WebhookDeliveryRecord), (d) => [d.created_at, d.id]);
  }

  async claimDue(claim: WebhookDeliveryClaim): Promise<readonly WebhookDeliveryRecord[]> {
    const { now, expiredBy, token, leaseUntil, limit } = claim;
    const free: Filter<WebhookDeliveryDoc> = { $or: [{ lease_until: null }, { lease_until: { $lte: now } }] };
    // Deliveries of endpoints that wait (disabled, backing off, probing) are left out of the query, as SQLite's join does:
    // otherwise one endpoint's backlog fills every claim's candidates and no other endpoint gets anything.
    const waiting = await this.c.webhookEndpoints
      .find({ $or: [{ state: { $ne: 'enabled' } }, { next_retry_at: { $gt: now } }, { probe_until: { $gt: now } }] }, { projection: { _id: 1 } })
      .toArray();
    const due: Filter<WebhookDeliveryDoc> = { next_attempt_at: { $lte: now }, endpoint_id: { $nin: waiting.map((e) => e._id) } };
    const open: Filter<WebhookDeliveryDoc> = { $and: [{ state: 'pending' }, free, { $or: [due, { created_at: { $lte: expiredBy } }] }] };
    const candidates = await this.c.webhookDeliveries.find(open).sort({ next_attempt_at: 1, position: 1 }).limit(limit * 4).toArray();
    const endpoints = new Map<string, WebhookEndpointRecord | null>();
    const endpointOf = async (id: string) => {
      if (!endpoints.has(id)) endpoints.set(id, parse<WebhookEndpointRecord>(await this.c.webhookEndpoints.findOne({ _id: id })));
      return endpoints.get(id) ?? null;
    };
    const claimed: WebhookDeliveryRecord[] = [];
    for (const candidate of candidates) {
      if (claimed.length >= limit) break;
      let probe = false;
      // An expired delivery is claimed whatever holds it back, for the worker to fail it.
      if (candidate.created_at > expiredBy) {
        const endpoint = await endpointOf(candidate.endpoint_id);
        if (endpoint?.state !== 'enabled') continue;
        if (endpoint.next_retry_at && endpoint.next_retry_at > now) continue;
        if (candidate.subject !== null) {
          const earlier = { state: 'pending', endpoint_id: candidate.endpoint_id, subject: candidate.subject, position: { $lt: candidate.position } };
          if ((await this.c.webhookDeliveries.countDocuments(earlier, { limit: 1 })) > 0) continue;
        }
        probe = Boolean(endpoint.next_retry_at);
        // A failing endpoint's one delivery at a time: take its probe first (compare-and-set on the endpoint document).
        if (probe && (await this.c.webhookEndpoints.updateOne({ $and: [{ _id: candidate.endpoint_id }, probeFree(now)] }, { $set: { probe_delivery: candidate._id, probe_until: leaseUntil } })).modifiedCount !== 1) continue;
      }
      const leased: WebhookDeliveryRecord = { ...(parse<WebhookDeliveryRecord>(candidate) as WebhookDeliveryRecord), lease: { token, until: leaseUntil } };
      const won = await this.c.webhookDeliveries.updateOne(
        { $and: [{ _id: candidate._id, state: 'pending' }, free] },
        { $set: { lease_until: leaseUntil, lease_token: token, record: JSON.stringify(leased) } },
      );
      if (won.modifiedCount === 1) claimed.push(leased);
      else if (probe) await this.giveBackProbe(candidate.endpoint_id, candidate._id);
    }
    return claimed;
  }

  async settle(delivery: WebhookDeliveryRecord, token: string): Promise<boolean> {
    const settled: WebhookDeliveryRecord = { ...delivery, lease: null };
    const { _id, ...fields } = deliveryDoc(settled);
    const result = await this.c.webhookDeliveries.updateOne({ _id, lease_token: token }, { $set: fields });
    if (result.matchedCount !== 1) return false;
    await this.giveBackProbe(delivery.endpoint_id, delivery.id);
    return true;
  }

  private async giveBackProbe(endpointId: string, deliveryId: string): Promise<void> {
    await this.c.webhookEndpoints.updateOne({ _id: endpointId, probe_delivery: deliveryId }, { $set: { probe_delivery: null, probe_until: null } });
  }

  async prune(before: string): Promise<number> {
    return (await this.c.webhookDeliveries.deleteMany({ state: { $ne: 'pending' }, created_at: { $lt: before } })).deletedCount;
  }
}
