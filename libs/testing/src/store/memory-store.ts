import type { BerthStore } from '@berth/ports';
import { MemoryAgents } from './memory-agents';
import { MemoryBlobs } from './memory-blobs';
import { MemoryLeases, MemorySandboxClaims } from './memory-coordination';
import { MemoryEnvironments } from './memory-environments';
import { MemoryFiles } from './memory-files';
import { MemoryInspection } from './memory-inspection';
import { MemoryJournal } from './memory-journal';
import { MemorySecrets } from './memory-secrets';
import { MemoryApiKeys, MemoryIdempotencyKeys, MemoryNatsCredentials } from './memory-keys';
import { MemorySessions } from './memory-sessions';
import { MemorySnapshots } from './memory-snapshots';
import { MemoryTranscripts } from './memory-transcripts';
import { MemoryVaults } from './memory-vaults';
import { MemoryWebhookDeliveries, MemoryWebhookEndpoints, MemoryWebhooks } from './memory-webhooks';

/**
 * A BerthStore in plain Maps for fast wiring tests. It passes the same contract suite as the SQLite
 * and MongoDB adapters (sharing their rules from @berth/store/shared); records are copied in and
 * out, so callers cannot mutate stored state.
 */
export class MemoryStore implements BerthStore {
  readonly snapshots = new MemorySnapshots();
  readonly sessions = new MemorySessions();
  readonly journal = new MemoryJournal({ snapshots: this.snapshots, sessions: this.sessions });
  /** Webhook endpoints and deliveries; configuration writes store their deliveries here with them. */
  readonly webhooks = new MemoryWebhooks();
  readonly agents = new MemoryAgents(this.webhooks);
  readonly environments = new MemoryEnvironments(this.webhooks);
  readonly idempotency = new MemoryIdempotencyKeys();
  readonly apiKeys = new MemoryApiKeys();
  readonly natsCredentials = new MemoryNatsCredentials();
  readonly transcripts = new MemoryTranscripts();
  readonly files = new MemoryFiles();
  readonly blobs = new MemoryBlobs();
  readonly secrets = new MemorySecrets();
  readonly inspection = new MemoryInspection(this);
  readonly webhookEndpoints = new MemoryWebhookEndpoints(this.webhooks);
  readonly webhookDeliveries = new MemoryWebhookDeliveries(this.webhooks);
  readonly vaults = new MemoryVaults(this.webhooks);
  readonly sandboxClaims = new MemorySandboxClaims();
  readonly leases = new MemoryLeases();

  async init(): Promise<void> {}

  async close(): Promise<void> {}
}
