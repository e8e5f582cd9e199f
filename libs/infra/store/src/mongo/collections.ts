import type { Db, IndexDescription, ObjectId } from 'mongodb';
import type { SealedSecret } from '@berth/contracts';

/**
 * Document shapes and indexes. Free-form payloads (events, snapshot state, records) are stored as
 * JSON strings: user data may hold keys MongoDB treats specially (`$…`, dotted), and the string
 * round-trips byte for byte. Queryable fields sit beside it. No document grows with a session's or
 * an agent's history: events, agent versions and transcript pieces are documents of their own.
 */
export type JournalDoc = {
  _id: ObjectId;
  session_id: string;
  seq: number;
  type: string;
  command_id: string;
  event_id: string;
  occurred_at: string;
  /** The outbox order of the commit that wrote this event (see MongoJournal). */
  commit_order: number;
  body: string;
};

/** One committed command's events not yet published: seqs `from..to` of one session. */
export type OutboxDoc = { _id: ObjectId; order: number; session_id: string; from: number; to: number; occurred_at: string };

export type SnapshotDoc = { _id: string; version: number; state: string; updated_at: string };

export type SessionDoc = {
  _id: string;
  owner_id: string;
  agent_id: string;
  agent_version: number;
  status: string;
  created_at: string;
  archived: boolean;
  deleted: boolean;
  last_seq: number;
  record: string;
};

/** An agent's head: what is agent-wide, and its latest version's record so lists read one document. */
export type AgentDoc = {
  _id: string;
  owner_id: string;
  latest_version: number;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  latest: string;
};

export type AgentVersionDoc = { _id: ObjectId; agent_id: string; owner_id: string; version: number; record: string };

export type EnvironmentDoc = { _id: string; owner_id: string; created_at: string; archived: boolean; deleted: boolean; record: string };

/** `_id` is `<owner_id>:<key>`; owner ids are safe tokens, so the join is unambiguous. */
export type IdempotencyDoc = { _id: string; owner_id: string; key: string; subject: string; session_id: string; created_at: string };

export type ApiKeyDoc = { _id: string; owner_id: string; prefix: string; hash: string; name: string; created_at: string; revoked_at: string | null };

export type NatsCredentialDoc = { _id: string; owner_id: string; name: string; public_key: string; created_at: string; revoked_at: string | null };

/** One piece of a mirrored transcript file (at most StoreLimits.transcriptPieceBytes). */
export type TranscriptChunkDoc = { _id: ObjectId; session_id: string; path: string; offset: number; bytes: number; data: string };

export type FileDoc = { _id: string; owner_id: string; scope_id: string | null; created_at: string; deleted: boolean; record: string };

/** `_id` is `<session_id>:<name>`; both are safe tokens. */
export type SecretDoc = { _id: string; session_id: string; name: string; secret?: SealedSecret; value?: string };
/** `probe_*`: the one delivery out to a failing endpoint (its probe), taken by a claim and given back by its settle; not part of the record. */
export type WebhookEndpointDoc = {
  _id: string;
  owner_id: string;
  state: string;
  version: number;
  created_at: string;
  record: string;
  next_retry_at?: string | null;
  probe_delivery?: string | null;
  probe_until?: string | null;
};

export type WebhookDeliveryDoc = {
  _id: string;
  owner_id: string;
  endpoint_id: string;
  subject: string | null;
  position: number;
  state: string;
  next_attempt_at: string | null;
  lease_until: string | null;
  lease_token: string | null;
  created_at: string;
  record: string;
};

export type VaultDoc = { _id: string; owner_id: string; created_at: string; archived: boolean; record: string };

/**
 * `version` (absent on documents from before versions: 0) is what an update compares and sets;
 * `refresh_due_at` the record's `refresh.state.next_attempt_at`, for the refresher's scan.
 */
export type VaultCredentialDoc = {
  _id: string;
  owner_id: string;
  vault_id: string;
  created_at: string;
  archived: boolean;
  version?: number;
  refresh_due_at?: string | null;
  record: string;
};

/** `_id` is the sandbox id (a container id). */
export type SandboxClaimDoc = { _id: string; claimant: string; claimed_at: string };

/** `_id` is the lease name; `expires_at` in epoch milliseconds; `holder` null once released. */
export type LeaseDoc = { _id: string; holder: string | null; epoch: number; expires_at: number };

export const collectionsOf = (db: Db) => ({
  journal: db.collection<JournalDoc>('journal'),
  outbox: db.collection<OutboxDoc>('outbox'),
  snapshots: db.collection<SnapshotDoc>('snapshots'),
  sessions: db.collection<SessionDoc>('sessions'),
  agents: db.collection<AgentDoc>('agents'),
  agentVersions: db.collection<AgentVersionDoc>('agent_versions'),
  environments: db.collection<EnvironmentDoc>('environments'),
  idempotency: db.collection<IdempotencyDoc>('idempotency_keys'),
  apiKeys: db.collection<ApiKeyDoc>('api_keys'),
  natsCredentials: db.collection<NatsCredentialDoc>('nats_credentials'),
  transcripts: db.collection<TranscriptChunkDoc>('transcript_chunks'),
  files: db.collection<FileDoc>('files'),
  secrets: db.collection<SecretDoc>('session_secrets'),
  webhookEndpoints: db.collection<WebhookEndpointDoc>('webhook_endpoints'),
  webhookDeliveries: db.collection<WebhookDeliveryDoc>('webhook_deliveries'),
  vaults: db.collection<VaultDoc>('vaults'),
  vaultCredentials: db.collection<VaultCredentialDoc>('vault_credentials'),
  sandboxClaims: db.collection<SandboxClaimDoc>('sandbox_claims'),
  leases: db.collection<LeaseDoc>('leases'),
});
export type Collections = ReturnType<typeof collectionsOf>;

/** Index names a duplicate-key error is classified by (see `isDuplicateOn`). */
export const Unique = {
  position: { name: 'session_seq', key: { session_id: 1, seq: 1 } },
  agentVersion: { name: 'agent_version', key: { agent_id: 1, version: 1 } },
  apiKeyPrefix: { name: 'prefix', key: { prefix: 1 } },
  transcriptPiece: { name: 'session_path_offset', key: { session_id: 1, path: 1, offset: 1 } },
} as const;

/** Every unique index by name, for classifying a duplicate whose error carries only the key pattern. */
export const UNIQUE_KEYS: Readonly<Record<string, Readonly<Record<string, 1>>>> = Object.fromEntries(Object.values(Unique).map((u) => [u.name, u.key]));

export const INDEXES: Readonly<Partial<Record<keyof Collections, IndexDescription[]>>> = {
  journal: [
    { key: Unique.position.key, name: Unique.position.name, unique: true },
    { key: { session_id: 1, command_id: 1, seq: 1 }, name: 'session_command' },
  ],
  outbox: [
    { key: { order: 1, _id: 1 }, name: 'order' },
    { key: { session_id: 1, from: 1 }, name: 'session_from' },
  ],
  sessions: [{ key: { owner_id: 1, created_at: 1, _id: 1 }, name: 'owner_created' }],
  agents: [{ key: { owner_id: 1, created_at: 1, _id: 1 }, name: 'owner_created' }],
  agentVersions: [{ key: Unique.agentVersion.key, name: Unique.agentVersion.name, unique: true }],
  environments: [{ key: { owner_id: 1, created_at: 1, _id: 1 }, name: 'owner_created' }],
  apiKeys: [
    { key: Unique.apiKeyPrefix.key, name: Unique.apiKeyPrefix.name, unique: true },
    { key: { owner_id: 1, created_at: 1 }, name: 'owner_created' },
  ],
  natsCredentials: [
    { key: { public_key: 1 }, name: 'public_key', unique: true },
    { key: { owner_id: 1, created_at: 1 }, name: 'owner_created' },
    { key: { revoked_at: 1 }, name: 'revoked', partialFilterExpression: { revoked_at: { $type: 'string' } } },
  ],
  transcripts: [{ key: Unique.transcriptPiece.key, name: Unique.transcriptPiece.name, unique: true }],
  files: [
    { key: { owner_id: 1, created_at: 1, _id: 1 }, name: 'owner_created' },
    { key: { owner_id: 1, scope_id: 1, created_at: 1, _id: 1 }, name: 'owner_scope_created' },
  ],
  secrets: [{ key: { session_id: 1 }, name: 'session' }],
  webhookEndpoints: [{ key: { owner_id: 1, created_at: 1, _id: 1 }, name: 'owner_created' }],
  webhookDeliveries: [
    { key: { endpoint_id: 1, created_at: 1, _id: 1 }, name: 'endpoint_created' },
    { key: { next_attempt_at: 1 }, name: 'due', partialFilterExpression: { state: 'pending' } },
    { key: { created_at: 1 }, name: 'expiring', partialFilterExpression: { state: 'pending' } },
    { key: { endpoint_id: 1, subject: 1, position: 1 }, name: 'in_order', partialFilterExpression: { state: 'pending' } },
    { key: { state: 1, created_at: 1 }, name: 'settled' },
  ],
  vaults: [{ key: { owner_id: 1, created_at: 1, _id: 1 }, name: 'owner_created' }],
  vaultCredentials: [
    { key: { vault_id: 1, created_at: 1, _id: 1 }, name: 'vault_created' },
    { key: { refresh_due_at: 1 }, name: 'refresh_due', partialFilterExpression: { archived: false, refresh_due_at: { $type: 'string' } } },
  ],
};

export async function ensureIndexes(collections: Collections): Promise<void> {
  for (const [name, indexes] of Object.entries(INDEXES) as [keyof Collections, IndexDescription[]][]) {
    await collections[name].createIndexes(indexes);
  }
}
