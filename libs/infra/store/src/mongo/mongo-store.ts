import { BerthError, ErrorCodes } from '@berth/core';
import type { BerthStore } from '@berth/ports';
import { MongoClient, type ClientSession } from 'mongodb';
import { MongoAgents } from './agents';
import { MongoApiKeys } from './api-keys';
import { MongoNatsCredentials } from './nats-credentials';
import { collectionsOf, ensureIndexes, type Collections } from './collections';
import { MongoLeases, MongoSandboxClaims } from './coordination';
import { GridFsBlobStore } from '../blobs/gridfs-blobs';
import type { MongoContext } from './context';
import { MongoEnvironments } from './environments';
import { asStoreError } from './errors';
import { MongoFiles } from './files';
import { withStoreErrors } from './guard';
import { MongoIdempotencyKeys } from './idempotency';
import { MongoInspection } from './inspection';
import { MongoJournal } from './journal';
import { MongoSecrets } from './secrets';
import { MongoSessions } from './sessions';
import { clientOptionsFor, commitDeadlineMs, databaseOf } from './settings';
import { MongoSnapshots } from './snapshots';
import { inTransaction } from './transaction';
import { MongoTranscripts } from './transcripts';
import { MongoVaults } from './vaults';
import { MongoWebhookDeliveries, MongoWebhookEndpoints } from './webhooks';

export type MongoStoreOptions = Readonly<{
  /** Defaults to the database named in the URL, else `berth`. */
  dbName?: string;
}>;

/**
 * The production store. A command's commit, an agent's new version and a transcript append are
 * each one multi-document transaction, so the server must be a replica set (a single-node one is
 * enough; `init` refuses a standalone server). Every wait is bounded (see MONGO_DEFAULTS, or the
 * URL's own options), reads that must see the last write go to the primary, and driver failures
 * reach callers as coded errors (`asStoreError`).
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
  readonly files: MongoFiles;
  readonly blobs: GridFsBlobStore;
  readonly secrets: MongoSecrets;
  readonly inspection: MongoInspection;
  readonly webhookEndpoints: MongoWebhookEndpoints;
  readonly webhookDeliveries: MongoWebhookDeliveries;
  readonly vaults: MongoVaults;
  readonly sandboxClaims: MongoSandboxClaims;
  readonly leases: MongoLeases;

  constructor(url: string, options: MongoStoreOptions = {}) {
    this.client = new MongoClient(url, clientOptionsFor(url));
    const db = this.client.db(options.dbName ?? databaseOf(url));
    this.c = collectionsOf(db);
    const waits = { serverSelectionTimeoutMS: this.client.options.serverSelectionTimeoutMS, wtimeoutMS: this.client.options.writeConcern?.wtimeoutMS ?? 0 };
    const settings = { deadlineMs: commitDeadlineMs(waits), maxCommitTimeMS: waits.wtimeoutMS > 0 ? waits.wtimeoutMS : commitDeadlineMs(waits) };
    const context: MongoContext = {
      c: this.c,
      transaction: (work, retryOn) => inTransaction(this.client, work, { ...settings, retryOn }),
      atOnePointInTime: async <T>(work: (session: ClientSession) => Promise<T>) => {
        const session = this.client.startSession({ snapshot: true });
        try {
          return await work(session);
        } finally {
          await session.endSession();
        }
      },
    };
    this.journal = withStoreErrors(new MongoJournal(context));
    this.snapshots = withStoreErrors(new MongoSnapshots(context));
    this.sessions = withStoreErrors(new MongoSessions(context));
    this.agents = withStoreErrors(new MongoAgents(context));
    this.environments = withStoreErrors(new MongoEnvironments(context));
    this.idempotency = withStoreErrors(new MongoIdempotencyKeys(context));
    this.apiKeys = withStoreErrors(new MongoApiKeys(context));
    this.natsCredentials = withStoreErrors(new MongoNatsCredentials(this.c));
    this.transcripts = withStoreErrors(new MongoTranscripts(context));
    this.inspection = withStoreErrors(new MongoInspection(context));
    this.files = withStoreErrors(new MongoFiles(this.c));
    this.blobs = withStoreErrors(new GridFsBlobStore(db));
    this.secrets = withStoreErrors(new MongoSecrets(this.c));
    this.webhookEndpoints = withStoreErrors(new MongoWebhookEndpoints(this.c));
    this.webhookDeliveries = withStoreErrors(new MongoWebhookDeliveries(this.c));
    this.vaults = withStoreErrors(new MongoVaults(context));
    this.sandboxClaims = withStoreErrors(new MongoSandboxClaims(this.c));
    this.leases = withStoreErrors(new MongoLeases(this.c));
  }

  /**
   * Connects, checks the server is a replica set (or a sharded cluster) and creates indexes. An
   * unreachable server is a coded UNAVAILABLE, not a driver error.
   */
  async init(): Promise<void> {
    try {
      await this.client.connect();
    } catch (e) {
      throw new BerthError(ErrorCodes.UNAVAILABLE, 503, `MongoDB is unreachable: ${e instanceof Error ? e.message : String(e)}`);
    }
    try {
      const hello = await this.client.db('admin').command({ hello: 1 });
      if (typeof hello.setName !== 'string' && hello.msg !== 'isdbgrid') {
        throw new BerthError(
          'STORE_NOT_A_REPLICA_SET',
          503,
          'MongoDB is a standalone server, and Berth commits each command in a multi-document transaction, which needs a replica set. ' +
            'A single-node one is enough: start mongod with --replSet rs0, run rs.initiate() once, and add replicaSet=rs0 to BERTH_STORE_URL (docs/deploy.md → MongoDB).',
        );
      }
      await ensureIndexes(this.c);
    } catch (e) {
      throw asStoreError(e);
    }
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}
