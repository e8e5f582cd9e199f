import { BerthError, ErrorCodes } from '@berth/core';
import type { BerthStore } from '@berth/ports';
import { MongoClient } from 'mongodb';
import { MongoAgents } from './agents';
import { MongoApiKeys } from './api-keys';
import { MongoNatsCredentials } from './nats-credentials';
import { collectionsOf, ensureIndexes, type Collections } from './collections';
import { MongoEnvironments } from './environments';
import { MongoIdempotencyKeys } from './idempotency';
import { MongoJournal } from './journal';
import { MongoSessions } from './sessions';
import { MongoSnapshots } from './snapshots';
import { MongoTranscripts } from './transcripts';
import { MongoVaults } from './vaults';
import { MongoWebhookDeliveries, MongoWebhookEndpoints } from './webhooks';

export type MongoStoreOptions = Readonly<{
  /** Defaults to the database named in the URL, else `berth`. */
  dbName?: string;
}>;

/** The database a connection string names (`mongodb://host/<db>?…`), if any. */
const dbNameOf = (url: string): string | undefined => /^mongodb(?:\+srv)?:\/\/[^/]+\/([^?/]+)/.exec(url)?.[1];

/**
 * The production store. Every write is a single-document operation (no multi-document
 * transactions, so a standalone server works); races are decided by unique indexes and
 * compare-and-set filters, with duplicate key 11000 read as "another writer won".
 */
export class MongoStore implements BerthStore {
  private readonly client: MongoClient;
  private readonly c: Collections;
  readonly journal: MongoJournal;
  readonly snapshots: MongoSnapshots;
  readonly sessions: MongoSessions;
  readonly agents: MongoAgents;
  readonly environments: MongoEnvironments;
  readonly idempotency: MongoIdempotencyKeys;
  readonly apiKeys: MongoApiKeys;
  readonly natsCredentials: MongoNatsCredentials;
  readonly transcripts: MongoTranscripts;
  readonly webhookEndpoints: MongoWebhookEndpoints;
  readonly webhookDeliveries: MongoWebhookDeliveries;
  readonly vaults: MongoVaults;

  constructor(url: string, options: MongoStoreOptions = {}) {
    this.client = new MongoClient(url, { retryWrites: true, writeConcern: { w: 'majority' } });
    this.c = collectionsOf(this.client.db(options.dbName ?? dbNameOf(url) ?? 'berth'));
    this.journal = new MongoJournal(this.c);
    this.snapshots = new MongoSnapshots(this.c);
    this.sessions = new MongoSessions(this.c);
    this.agents = new MongoAgents(this.c);
    this.environments = new MongoEnvironments(this.c);
    this.idempotency = new MongoIdempotencyKeys(this.c);
    this.apiKeys = new MongoApiKeys(this.c);
    this.natsCredentials = new MongoNatsCredentials(this.c);
    this.transcripts = new MongoTranscripts(this.c);
    this.webhookEndpoints = new MongoWebhookEndpoints(this.c);
    this.webhookDeliveries = new MongoWebhookDeliveries(this.c);
    this.vaults = new MongoVaults(this.c);
  }

  /** Connects and creates indexes; an unreachable server is a coded UNAVAILABLE, not a driver error. */
  async init(): Promise<void> {
    try {
      await this.client.connect();
    } catch (e) {
      throw new BerthError(ErrorCodes.UNAVAILABLE, 503, `MongoDB is unreachable: ${e instanceof Error ? e.message : String(e)}`);
    }
    await ensureIndexes(this.c);
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
