import { eventIdFor, type CredentialRecord, type RecordedEvent, type VaultRecord, type WebhookDeliveryRecord, type WebhookEndpointRecord } from '@berth/contracts';
import type { AgentRecord, BerthStore, CommandCommit, EnvironmentRecord, FileRecord, SessionRecord } from '@berth/ports';

/** Builders for contract-suite records: valid shapes, every field overridable. */

export const at = (minute: number): string => new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();

/** Odd seqs are TurnStarted, even seqs TurnCompleted, so type filters have something to pick. */
export function event(sessionId: string, seq: number, commandId = `cmd_${seq}`, index = 0): RecordedEvent {
  const meta = { id: eventIdFor(commandId, index), session_id: sessionId, seq, schema_version: 1, command_id: commandId, occurred_at: at(seq) };
  return seq % 2 === 1
    ? { ...meta, type: 'TurnStarted', data: { turn_id: `turn_${seq}` } }
    : { ...meta, type: 'TurnCompleted', data: { turn_id: `turn_${seq - 1}`, interrupted: false } };
}

/** Events `from..to` of one decision (one command). */
export const batch = (sessionId: string, from: number, to: number, commandId = `cmd_${from}`): RecordedEvent[] =>
  Array.from({ length: to - from + 1 }, (_, i) => event(sessionId, from + i, commandId, i));

export const session = (over: Partial<SessionRecord> & { id: string }): SessionRecord => ({
  owner_id: 'owner_a',
  agent_id: 'agent_1',
  agent_version: 1,
  environment_id: 'env_1',
  title: null,
  metadata: {},
  status: 'idle',
  view: { usage: { input_tokens: 0, output_tokens: 0 } },
  last_seq: 1,
  created_at: at(0),
  updated_at: at(0),
  archived_at: null,
  deleted: false,
  ...over,
});

export const agent = (over: Partial<AgentRecord> & { id: string; version: number }): AgentRecord => ({
  owner_id: 'owner_a',
  name: `Agent ${over.id}`,
  config: { model: 'claude-sonnet-4-5', system: `v${over.version}`, tools: [] },
  created_at: at(0),
  updated_at: at(over.version),
  archived_at: null,
  ...over,
});

export const environment = (over: Partial<EnvironmentRecord> & { id: string }): EnvironmentRecord => ({
  owner_id: 'owner_a',
  name: `Env ${over.id}`,
  description: null,
  config: { type: 'cloud', harness: 'claude-code', networking: { type: 'unrestricted' } },
  metadata: {},
  created_at: at(0),
  updated_at: at(0),
  archived_at: null,
  deleted: false,
  ...over,
});

export const vault = (over: Partial<VaultRecord> & { id: string }): VaultRecord => ({
  owner_id: 'owner_a',
  display_name: `Vault ${over.id}`,
  metadata: {},
  created_at: at(1),
  updated_at: at(1),
  archived_at: null,
  ...over,
});

export const credential = (over: Partial<CredentialRecord> & { id: string }): CredentialRecord => ({
  owner_id: 'owner_a',
  vault_id: 'vlt_1',
  display_name: null,
  metadata: {},
  auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp' },
  secret: { key_id: 'k1', iv: 'aXY=', ciphertext: 'Y3Q=', tag: 'dGFn' },
  created_at: at(1),
  updated_at: at(1),
  archived_at: null,
  ...over,
});

export const webhookEndpoint = (over: Partial<WebhookEndpointRecord> & { id: string }): WebhookEndpointRecord => ({
  owner_id: 'owner_a',
  url: 'https://hooks.example.com/berth',
  name: '',
  description: '',
  enabled_events: ['session.status_idled'],
  state: 'enabled',
  disabled_reason: '',
  secret: { key_id: 'k1', iv: 'aXY=', ciphertext: 'Y3Q=', tag: 'dGFn' },
  consecutive_failures: 0,
  failing_since: null,
  next_retry_at: null,
  version: 1,
  created_at: at(1),
  updated_at: at(1),
  ...over,
});

export const webhookDelivery = (over: Partial<WebhookDeliveryRecord> & { id: string }): WebhookDeliveryRecord => ({
  owner_id: 'owner_a',
  endpoint_id: 'whk_1',
  event_id: `wevt_${over.id}`,
  event_type: 'session.status_idled',
  subject: 'sesn_1',
  position: 1,
  payload: '{"type":"event"}',
  state: 'pending',
  attempt_count: 0,
  own_failures: 0,
  attempts: [],
  next_attempt_at: at(0),
  delivered_at: null,
  created_at: at(0),
  redelivery_of: null,
  lease: null,
  ...over,
});

export const file = (over: Partial<FileRecord> & { id: string }): FileRecord => ({
  owner_id: 'owner_a',
  filename: `${over.id}.txt`,
  mime_type: 'text/plain',
  size_bytes: 5,
  created_at: at(0),
  expires_at: null,
  downloadable: true,
  scope: null,
  blob_key: `blob_${over.id}`,
  sha256: 'a'.repeat(64),
  output: null,
  deleted: false,
  ...over,
});

/** One command's commit: events from..to, and (unless left out) the snapshot and read-model row at `to`. */
export function commitOf(
  sessionId: string,
  from: number,
  to: number,
  options: { commandId?: string; snapshot?: boolean; record?: Partial<SessionRecord> | false } = {},
): CommandCommit {
  const commandId = options.commandId ?? `cmd_${from}`;
  return {
    sessionId,
    events: batch(sessionId, from, to, commandId),
    snapshot: options.snapshot === false ? undefined : { sessionId, version: to, state: { folded: to, by: commandId }, updatedAt: at(to) },
    record: options.record === false ? undefined : session({ title: commandId, ...options.record, id: sessionId, last_seq: to }),
  };
}

/** A session as the kernel leaves it: events 1..last_seq committed with this read-model row. */
export async function seedSession(store: BerthStore, record: SessionRecord): Promise<void> {
  await store.journal.commit({ sessionId: record.id, events: batch(record.id, 1, record.last_seq, `cmd_seed_${record.id}`), record });
}
