import type { WebhookDeliveryRecord } from '@berth/contracts';
import type { BlobStore, FileStore, SessionSecrets } from './files.port';
import type { Leases, SandboxClaims } from './coordination.port';
import type { SessionJournal, SessionSnapshots } from './session-store.port';
import type { VaultStore } from './vaults.port';
import type { WebhookDeliveryStore, WebhookEndpointStore } from './webhooks.port';

/**
 * Read side for the gateway, plus the resources that are plain configuration (agents,
 * environments, API keys) and not event-sourced. Every record has an owner; every read takes the
 * owner and answers null / nothing for another owner's ids.
 */

export type Page<T> = Readonly<{ data: readonly T[]; next_page: string | null; prev_page?: string | null }>;

export type PageQuery = Readonly<{ limit: number; page?: string | null; order?: 'asc' | 'desc' }>;

export type AgentRecord = Readonly<{
  id: string;
  owner_id: string;
  version: number;
  name: string;
  /** The full versioned config (model, system, tools, mcp_servers, skills, description, metadata). */
  config: Readonly<Record<string, unknown>>;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
}>;

export type EnvironmentRecord = Readonly<{
  id: string;
  owner_id: string;
  name: string;
  description: string | null;
  /** Managed Agents `config` plus Berth's: harness, image, network, resources, idle policy, permission mode. */
  config: Readonly<Record<string, unknown>>;
  metadata: Readonly<Record<string, string>>;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  deleted: boolean;
}>;

/** The projection of a session the API lists and retrieves, written by each command's commit. */
export type SessionRecord = Readonly<{
  id: string;
  owner_id: string;
  agent_id: string;
  agent_version: number;
  environment_id: string;
  title: string | null;
  metadata: Readonly<Record<string, string>>;
  /** Public status: idle | running | rescheduling | terminated. */
  status: string;
  /** Full derived view for the API (lifecycle, stop_reason, recovery, usage, sandbox …). */
  view: Readonly<Record<string, unknown>>;
  last_seq: number;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  deleted: boolean;
}>;

export type SessionListQuery = PageQuery &
  Readonly<{ agent_id?: string; agent_version?: number; statuses?: readonly string[]; include_archived?: boolean; created_at?: Readonly<{ gt?: string; gte?: string; lt?: string; lte?: string }> }>;

/**
 * Each version is stored on its own (unique per agent and version), so an agent may have any number
 * of versions; a version record too large for the store is a PAYLOAD_TOO_LARGE error.
 */
/**
 * Configuration writes take the webhook deliveries of the change they make (`webhooks`, planned by
 * the caller) and store them in the same atomic write: both or neither, so no crash between the
 * change and its webhooks can lose one. A write that changes nothing stores none.
 */
export type WebhookOutbox = readonly WebhookDeliveryRecord[];

export interface AgentStore {
  /** Inserts version 1, or a next version when `expectedVersion` matches the latest (else ConcurrencyError). */
  putVersion(agent: AgentRecord, expectedVersion: number, webhooks?: WebhookOutbox): Promise<void>;
  get(ownerId: string, id: string, version?: number): Promise<AgentRecord | null>;
  list(ownerId: string, query: PageQuery & { include_archived?: boolean }): Promise<Page<AgentRecord>>;
  listVersions(ownerId: string, id: string, query: PageQuery): Promise<Page<AgentRecord>>;
  /** Archives at `at` unless already archived (then `webhooks` are not stored); the agent as it now is. */
  archive(ownerId: string, id: string, at: string, webhooks?: WebhookOutbox): Promise<AgentRecord | null>;
}

export interface EnvironmentStore {
  /** Inserts a new environment; an id already stored (any owner's) is a ConcurrencyError, and nothing, `webhooks` included, is stored. */
  insert(env: EnvironmentRecord, webhooks?: WebhookOutbox): Promise<void>;
  /** Inserts or replaces (same owner only: another owner's id is left alone, and `webhooks` not stored). */
  put(env: EnvironmentRecord, webhooks?: WebhookOutbox): Promise<void>;
  get(ownerId: string, id: string): Promise<EnvironmentRecord | null>;
  list(ownerId: string, query: PageQuery & { include_archived?: boolean }): Promise<Page<EnvironmentRecord>>;
}

/** Rows are written only by `SessionJournal.commit`, in the same atomic commit as the events they show. */
export interface SessionReadModel {
  get(ownerId: string, id: string): Promise<SessionRecord | null>;
  /** Internal lookup for services (no owner check). */
  getById(id: string): Promise<SessionRecord | null>;
  list(ownerId: string, query: SessionListQuery): Promise<Page<SessionRecord>>;
}

/** Create-session idempotency: (owner, key) → the session it created and the subject it was for. */
export type IdempotencyRecord = Readonly<{ owner_id: string; key: string; subject: string; session_id: string; created_at: string }>;

export interface IdempotencyKeys {
  /** Inserts when absent; returns the record now stored (the existing one when the key was taken). */
  claim(record: IdempotencyRecord): Promise<IdempotencyRecord>;
  get(ownerId: string, key: string): Promise<IdempotencyRecord | null>;
}

/** API keys are stored hashed; `prefix` is the public lookup part (e.g. `bk_live_ab12cd34`). */
export type ApiKeyRecord = Readonly<{ id: string; owner_id: string; prefix: string; hash: string; name: string; created_at: string; revoked_at: string | null }>;

export interface ApiKeys {
  insert(key: ApiKeyRecord): Promise<void>;
  byPrefix(prefix: string): Promise<ApiKeyRecord | null>;
  list(ownerId: string): Promise<readonly ApiKeyRecord[]>;
  revoke(ownerId: string, id: string, at: string): Promise<boolean>;
}

/**
 * An outside subscriber's NATS credential (docs/events.md). Only its public key is stored: the
 * credential itself (JWT + seed) is shown once, when it is minted.
 */
export type NatsCredentialRecord = Readonly<{ id: string; owner_id: string; name: string; public_key: string; created_at: string; revoked_at: string | null }>;

export interface NatsCredentials {
  insert(credential: NatsCredentialRecord): Promise<void>;
  list(ownerId: string): Promise<readonly NatsCredentialRecord[]>;
  /** The record as now stored (revoking again keeps the first time); null when the owner has no such credential. */
  revoke(ownerId: string, id: string, at: string): Promise<NatsCredentialRecord | null>;
  /** Every revoked credential of every owner: the revocation list the NATS server enforces. */
  revoked(): Promise<readonly NatsCredentialRecord[]>;
}

/**
 * The harness transcript mirror: appended as the transcript grows, so a new sandbox can resume. An
 * append is stored in pieces small enough for any store, all or nothing, so a file of any size fits.
 */
export type TranscriptChunk = Readonly<{ session_id: string; path: string; offset: number; data: string }>;

export interface TranscriptMirror {
  /** Appends `data` at `offset`; an offset already stored is a no-op (idempotent mirror). */
  append(chunk: TranscriptChunk): Promise<void>;
  /** Every mirrored file of the session, reassembled. */
  files(sessionId: string): Promise<readonly { path: string; data: string }[]>;
  /** Bytes mirrored so far for one file. */
  size(sessionId: string, path: string): Promise<number>;
  /** Bytes mirrored so far for every file of the session (a turn's checkpoint: where a fork cuts). */
  sizes(sessionId: string): Promise<readonly { path: string; bytes: number }[]>;
}

/** A session's position as each part of the store records it (what `berth store check` compares). */
export type SessionPosition = Readonly<{
  session_id: string;
  /** The journal's rows: how many, the lowest and the highest seq; null when it has none. */
  journal: Readonly<{ events: number; first_seq: number; last_seq: number }> | null;
  snapshot_version: number | null;
  record_last_seq: number | null;
}>;

/** One mirrored transcript file: its pieces, the first offset, the bytes stored and where the last piece ends. */
export type TranscriptExtent = Readonly<{ session_id: string; path: string; pieces: number; first_offset: number; bytes: number; end: number }>;

/** An agent's head (null when missing) against its stored versions. */
export type AgentExtent = Readonly<{ agent_id: string; latest_version: number | null; versions: number; max_version: number }>;

/** Committed events waiting for the outbox relay; `dangling`: outbox entries whose events are not in the journal. */
export type OutboxBacklog = Readonly<{ events: number; oldest_occurred_at: string | null; dangling: number }>;

/**
 * Cheap aggregates for consistency checks, a page at a time in key order. Each page is read at one
 * point in time, so a check running beside live traffic never sees half a commit.
 */
export interface StoreInspection {
  sessionPositions(after: string | null, limit: number): Promise<readonly SessionPosition[]>;
  transcriptExtents(after: Readonly<{ session_id: string; path: string }> | null, limit: number): Promise<readonly TranscriptExtent[]>;
  agentExtents(after: string | null, limit: number): Promise<readonly AgentExtent[]>;
  outboxBacklog(): Promise<OutboxBacklog>;
}

/** Everything a store adapter provides. */
export interface BerthStore {
  readonly journal: SessionJournal;
  readonly snapshots: SessionSnapshots;
  readonly sessions: SessionReadModel;
  readonly agents: AgentStore;
  readonly environments: EnvironmentStore;
  readonly idempotency: IdempotencyKeys;
  readonly apiKeys: ApiKeys;
  readonly natsCredentials: NatsCredentials;
  readonly transcripts: TranscriptMirror;
  /** Files API metadata; the bytes are in `blobs`. */
  readonly files: FileStore;
  readonly blobs: BlobStore;
  readonly secrets: SessionSecrets;
  readonly inspection: StoreInspection;
  readonly webhookEndpoints: WebhookEndpointStore;
  readonly webhookDeliveries: WebhookDeliveryStore;
  readonly vaults: VaultStore;
  /** Warm-sandbox claims shared by every sandbox-manager. */
  readonly sandboxClaims: SandboxClaims;
  /** Leases that fence replicas (one sweeper at a time, one acquisition per session). */
  readonly leases: Leases;
  /** Creates tables / indexes; idempotent. */
  init(): Promise<void>;
  close(): Promise<void>;
}
