/**
 * The SQLite schema. Queryable fields are columns; the record itself is a JSON column so the port
 * types can grow without migrations. Every statement is idempotent (init runs at each start).
 */
export const SQLITE_SCHEMA = `
CREATE TABLE IF NOT EXISTS journal (
  session_id  TEXT    NOT NULL,
  seq         INTEGER NOT NULL,
  type        TEXT    NOT NULL,
  command_id  TEXT    NOT NULL,
  occurred_at TEXT    NOT NULL,
  published   INTEGER NOT NULL DEFAULT 0,
  body        TEXT    NOT NULL,
  PRIMARY KEY (session_id, seq)
);
CREATE UNIQUE INDEX IF NOT EXISTS journal_by_command ON journal (session_id, command_id, seq);
-- The outbox: only unpublished rows are indexed, in insertion (rowid) order.
CREATE INDEX IF NOT EXISTS journal_unpublished ON journal (published) WHERE published = 0;
-- A session's unpublished rows, read before each publish (the outbox's per-session order).
CREATE INDEX IF NOT EXISTS journal_unpublished_by_session ON journal (session_id, seq) WHERE published = 0;

CREATE TABLE IF NOT EXISTS snapshots (
  session_id TEXT    PRIMARY KEY,
  version    INTEGER NOT NULL,
  state      TEXT    NOT NULL,
  updated_at TEXT    NOT NULL
);

CREATE TABLE IF NOT EXISTS sessions (
  id            TEXT    PRIMARY KEY,
  owner_id      TEXT    NOT NULL,
  agent_id      TEXT    NOT NULL,
  agent_version INTEGER NOT NULL,
  status        TEXT    NOT NULL,
  created_at    TEXT    NOT NULL,
  archived      INTEGER NOT NULL,
  deleted       INTEGER NOT NULL,
  last_seq      INTEGER NOT NULL,
  record        TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_by_owner ON sessions (owner_id, created_at, id);

CREATE TABLE IF NOT EXISTS agents (
  id             TEXT    PRIMARY KEY,
  owner_id       TEXT    NOT NULL,
  latest_version INTEGER NOT NULL,
  created_at     TEXT    NOT NULL,
  updated_at     TEXT    NOT NULL,
  archived_at    TEXT
);
CREATE INDEX IF NOT EXISTS agents_by_owner ON agents (owner_id, created_at, id);
CREATE TABLE IF NOT EXISTS agent_versions (
  id      TEXT    NOT NULL,
  version INTEGER NOT NULL,
  record  TEXT    NOT NULL,
  PRIMARY KEY (id, version)
);

CREATE TABLE IF NOT EXISTS environments (
  id         TEXT    PRIMARY KEY,
  owner_id   TEXT    NOT NULL,
  created_at TEXT    NOT NULL,
  archived   INTEGER NOT NULL,
  deleted    INTEGER NOT NULL,
  record     TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS environments_by_owner ON environments (owner_id, created_at, id);

CREATE TABLE IF NOT EXISTS idempotency_keys (
  owner_id   TEXT NOT NULL,
  key        TEXT NOT NULL,
  subject    TEXT NOT NULL,
  session_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (owner_id, key)
);

CREATE TABLE IF NOT EXISTS api_keys (
  id         TEXT PRIMARY KEY,
  owner_id   TEXT NOT NULL,
  prefix     TEXT NOT NULL UNIQUE,
  hash       TEXT NOT NULL,
  name       TEXT NOT NULL,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE INDEX IF NOT EXISTS api_keys_by_owner ON api_keys (owner_id, created_at);

CREATE TABLE IF NOT EXISTS nats_credentials (
  id         TEXT PRIMARY KEY,
  owner_id   TEXT NOT NULL,
  name       TEXT NOT NULL,
  public_key TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  revoked_at TEXT
);
CREATE INDEX IF NOT EXISTS nats_credentials_by_owner ON nats_credentials (owner_id, created_at);

CREATE TABLE IF NOT EXISTS transcript_chunks (
  session_id TEXT    NOT NULL,
  path       TEXT    NOT NULL,
  "offset"   INTEGER NOT NULL,
  bytes      INTEGER NOT NULL,
  data       TEXT    NOT NULL,
  PRIMARY KEY (session_id, path, "offset")
);

CREATE TABLE IF NOT EXISTS files (
  id         TEXT    PRIMARY KEY,
  owner_id   TEXT    NOT NULL,
  scope_id   TEXT,
  created_at TEXT    NOT NULL,
  deleted    INTEGER NOT NULL,
  record     TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS files_by_owner ON files (owner_id, created_at, id);
CREATE INDEX IF NOT EXISTS files_by_scope ON files (owner_id, scope_id, created_at, id) WHERE scope_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS session_secrets (
  session_id TEXT NOT NULL,
  name       TEXT NOT NULL,
  value      TEXT NOT NULL,
  PRIMARY KEY (session_id, name)
);
CREATE TABLE IF NOT EXISTS webhook_endpoints (
  id         TEXT    PRIMARY KEY,
  owner_id   TEXT    NOT NULL,
  state      TEXT    NOT NULL,
  version    INTEGER NOT NULL,
  created_at TEXT    NOT NULL,
  record     TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_endpoints_by_owner ON webhook_endpoints (owner_id, created_at, id);

-- The webhook outbox and delivery log. Only pending rows are indexed for the worker.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id              TEXT    PRIMARY KEY,
  owner_id        TEXT    NOT NULL,
  endpoint_id     TEXT    NOT NULL,
  subject         TEXT,
  position        INTEGER NOT NULL,
  state           TEXT    NOT NULL,
  next_attempt_at TEXT,
  lease_until     TEXT,
  created_at      TEXT    NOT NULL,
  record          TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, created_at, id);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS webhook_deliveries_expiring ON webhook_deliveries (created_at) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS webhook_deliveries_in_order ON webhook_deliveries (endpoint_id, subject, position) WHERE state = 'pending';
CREATE INDEX IF NOT EXISTS webhook_deliveries_settled ON webhook_deliveries (created_at) WHERE state <> 'pending';
-- A failing endpoint's one delivery out at a time (its probe), until it is settled or \`until\` passes.
CREATE TABLE IF NOT EXISTS webhook_probes (
  endpoint_id TEXT PRIMARY KEY,
  delivery_id TEXT NOT NULL,
  until       TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS vaults (
  id         TEXT    PRIMARY KEY,
  owner_id   TEXT    NOT NULL,
  created_at TEXT    NOT NULL,
  archived   INTEGER NOT NULL,
  record     TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS vaults_by_owner ON vaults (owner_id, created_at, id);

CREATE TABLE IF NOT EXISTS vault_credentials (
  id         TEXT    PRIMARY KEY,
  owner_id   TEXT    NOT NULL,
  vault_id   TEXT    NOT NULL,
  created_at TEXT    NOT NULL,
  archived   INTEGER NOT NULL,
  record     TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS vault_credentials_by_vault ON vault_credentials (vault_id, created_at, id);
-- The refresher's scan: credentials whose OAuth refresh is due (the record's own field; no column to migrate).
CREATE INDEX IF NOT EXISTS vault_credentials_refresh_due ON vault_credentials (json_extract(record, '$.refresh.state.next_attempt_at')) WHERE archived = 0;

-- Coordination of replicas (docs/scale-out.md "Replicas"): warm-sandbox claims and leases.
CREATE TABLE IF NOT EXISTS sandbox_claims (
  sandbox_id TEXT PRIMARY KEY,
  claimant   TEXT NOT NULL,
  claimed_at TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS leases (
  name       TEXT    PRIMARY KEY,
  holder     TEXT,
  epoch      INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
`;
