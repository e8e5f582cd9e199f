import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { BerthStore } from '@berth/ports';
import { DirectoryBlobStore } from '../blobs/directory-blobs';
import { SqliteAgents } from './agents';
import { SqliteApiKeys } from './api-keys';
import { SqliteLeases, SqliteSandboxClaims } from './coordination';
import { SqliteNatsCredentials } from './nats-credentials';
import { SqliteEnvironments } from './environments';
import { SqliteFiles } from './files';
import { SqliteIdempotencyKeys } from './idempotency';
import { SqliteInspection } from './inspection';
import { SqliteJournal } from './journal';
import { SqliteSecrets } from './secrets';
import { SqliteSessions } from './sessions';
import { SqliteSnapshots } from './snapshots';
import { SqliteDb, type SqliteOptions } from './sqlite-db';
import { SqliteTranscripts } from './transcripts';
import { SqliteVaults } from './vaults';
import { SqliteWebhookDeliveries, SqliteWebhookEndpoints } from './webhooks';

export type SqliteStoreOptions = SqliteOptions &
  Readonly<{
    /** Where blobs (file contents) live: default `blobs/` beside the database file, a temporary directory for `:memory:`. */
    blobDir?: string;
  }>;

/**
 * The embedded store: one SQLite file (or `:memory:`) in WAL mode. better-sqlite3 is synchronous,
 * so each operation is one uninterrupted transaction on this connection; other processes on the
 * same file are serialised by SQLite's write lock (busy_timeout waits for it).
 */
export class SqliteStore implements BerthStore {
  private readonly db: SqliteDb;
  readonly journal: SqliteJournal;
  readonly snapshots: SqliteSnapshots;
  readonly sessions: SqliteSessions;
  readonly agents: SqliteAgents;
  readonly environments: SqliteEnvironments;
  readonly idempotency: SqliteIdempotencyKeys;
  readonly apiKeys: SqliteApiKeys;
  readonly natsCredentials: SqliteNatsCredentials;
  readonly transcripts: SqliteTranscripts;
  readonly files: SqliteFiles;
  readonly blobs: DirectoryBlobStore;
  readonly secrets: SqliteSecrets;
  /** A temporary blob directory this store made (in-memory database) and removes at close. */
  private readonly ownBlobDir: string | null;
  readonly inspection: SqliteInspection;
  readonly webhookEndpoints: SqliteWebhookEndpoints;
  readonly webhookDeliveries: SqliteWebhookDeliveries;
  readonly vaults: SqliteVaults;
  readonly sandboxClaims: SqliteSandboxClaims;
  readonly leases: SqliteLeases;

  constructor(path: string, options: SqliteStoreOptions = {}) {
    this.db = new SqliteDb(path, options);
    this.snapshots = new SqliteSnapshots(this.db);
    this.sessions = new SqliteSessions(this.db);
    this.journal = new SqliteJournal(this.db, { snapshots: this.snapshots, sessions: this.sessions });
    this.agents = new SqliteAgents(this.db);
    this.environments = new SqliteEnvironments(this.db);
    this.idempotency = new SqliteIdempotencyKeys(this.db);
    this.apiKeys = new SqliteApiKeys(this.db);
    this.natsCredentials = new SqliteNatsCredentials(this.db);
    this.transcripts = new SqliteTranscripts(this.db);
    this.files = new SqliteFiles(this.db);
    this.secrets = new SqliteSecrets(this.db);
    this.ownBlobDir = options.blobDir === undefined && path === ':memory:' ? mkdtempSync(join(tmpdir(), 'berth-blobs-')) : null;
    this.blobs = new DirectoryBlobStore(options.blobDir ?? this.ownBlobDir ?? join(dirname(path), 'blobs'));
    this.inspection = new SqliteInspection(this.db);
    this.webhookEndpoints = new SqliteWebhookEndpoints(this.db);
    this.webhookDeliveries = new SqliteWebhookDeliveries(this.db);
    this.vaults = new SqliteVaults(this.db);
    this.sandboxClaims = new SqliteSandboxClaims(this.db);
    this.leases = new SqliteLeases(this.db);
  }

  async init(): Promise<void> {
    this.db.migrate();
    await this.blobs.init();
  }

  async close(): Promise<void> {
    this.db.close();
    if (this.ownBlobDir !== null) rmSync(this.ownBlobDir, { recursive: true, force: true });
  }
}
