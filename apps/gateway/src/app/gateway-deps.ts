import type { Clock, IdGenerator } from '@berth/core';
import type { BerthStore, CommandBus, Logger, SecretBox } from '@berth/ports';
import type { HttpMetrics } from '@berth/telemetry';
import type { RefreshPolicy } from '@berth/vaults-domain';
import type { TargetPolicy } from '@berth/webhooks-domain';
import type { EventFeed } from '../stream/event-feed.port';
import type { SandboxProbe } from '@berth/session-use-cases';
import type { ReadinessCheck } from '../health/readiness';
import type { WorkspaceReads } from '../workspace/workspace-reads.port';
import type { SubscriberIssuer } from '../nats-credentials/subscriber-issuer.port';

/** The parts of the store the gateway reads and writes. */
export type GatewayStore = Pick<BerthStore, 'journal' | 'sessions' | 'agents' | 'environments' | 'idempotency' | 'apiKeys' | 'natsCredentials' | 'files' | 'blobs' | 'secrets' | 'webhookEndpoints' | 'webhookDeliveries' | 'vaults' | 'transcripts'>;

export type GatewayOptions = Readonly<{
  /** How long a write waits for the kernel's outcome before answering 504 TIMEOUT. */
  commandTimeoutMs: number;
  /** SSE comment-line heartbeat period. */
  heartbeatMs: number;
  /** Largest accepted JSON body (body-parser syntax, e.g. `1mb`). */
  bodyLimit: string;
  /** Largest file upload, in bytes (413 FILE_TOO_LARGE beyond). */
  fileMaxBytes: number;
  /** API users may create environments with `config.network: host` (operator opt-in, unsafe). */
  allowHostNetwork?: boolean;
  /** Largest session archive `POST /v1/sessions/import` takes, in bytes (413 ARCHIVE_TOO_LARGE beyond); default ARCHIVE_LIMITS.archiveBytes. */
  importMaxBytes?: number;
}>;

export const DEFAULT_OPTIONS: GatewayOptions = { commandTimeoutMs: 10_000, heartbeatMs: 15_000, bodyLimit: '1mb', fileMaxBytes: 500 * 1024 * 1024, allowHostNetwork: false };

export type GatewayDeps = Readonly<{
  store: GatewayStore;
  commandBus: CommandBus;
  eventFeed: EventFeed;
  sandboxProbe: SandboxProbe;
  workspace: WorkspaceReads;
  /** Mints outside subscribers' NATS credentials; null when the server has no issuer configured. */
  subscriberIssuer: SubscriberIssuer | null;
  clock: Clock;
  ids: IdGenerator;
  readiness: readonly ReadinessCheck[];
  options: GatewayOptions;
  log: Logger;
  metrics: HttpMetrics;
  /** Seals webhook signing secrets and vault credentials at rest. */
  secrets: SecretBox;
  /** Where webhook endpoints and OAuth token endpoints may point. */
  webhookTargets: TargetPolicy;
  /** When the refresher refreshes an mcp_oauth credential's token (a new or updated credential is planned with it). */
  vaultRefresh: RefreshPolicy;
}>;
