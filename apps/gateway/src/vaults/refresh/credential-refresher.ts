import { randomUUID } from 'node:crypto';
import { credentialVersion, encodeCredentialSecret, refreshSecretAad, type CredentialRecord, type RefreshSecrets } from '@berth/contracts';
import { ConcurrencyError, type Clock } from '@berth/core';
import type { Leases, Logger, SecretBox, VaultStore } from '@berth/ports';
import type { VaultMetrics } from '@berth/telemetry';
import {
  credentialAfterRefresh,
  readTokenAnswer,
  refreshDue,
  tokenRequest,
  type AttemptResult,
  type RefreshOutcome,
  type RefreshPolicy,
  type SealedGrant,
  type TokenGrant,
} from '@berth/vaults-domain';
import type { ResourceWebhooks } from '../../webhooks/delivery/resource-webhooks';
import type { TokenEndpoint } from './http-token-endpoint';
import { BatchTicker } from '../../outbound/batch-ticker';

/** The store lease the gateways' refreshers compete for: one refreshes at a time. */
export const REFRESHER_LEASE = 'vault-credential-refresher';

/** Writes of one attempt's result retried on a version conflict (a user's update, read and merged again). */
const STORE_ATTEMPTS = 5;

export type CredentialRefresherOptions = Readonly<{
  policy: RefreshPolicy;
  /** How long the lease lasts unless renewed; longer than a token request may take, so it outlives the request it was renewed for. */
  leaseMs: number;
  /** Credentials refreshed per tick at most. */
  batchSize: number;
}>;

export type CredentialRefresherDeps = Readonly<{
  vaults: Pick<VaultStore, 'refreshDue' | 'getCredential' | 'updateCredential'>;
  leases: Leases;
  secrets: SecretBox;
  endpoint: TokenEndpoint;
  webhooks: Pick<ResourceWebhooks, 'plan'>;
  clock: Clock;
  log: Logger;
  metrics: VaultMetrics;
  options: CredentialRefresherOptions;
}>;

/**
 * Keeps `mcp_oauth` access tokens alive, a thin shell around the pure rules of
 * `@berth/vaults-domain`: in every gateway, but acting in one at a time (the store lease
 * `vault-credential-refresher`, renewed before each exchange, so two gateways never both use a
 * refresh token a rotating endpoint accepts once). Each tick it reads the credentials whose
 * refresh is due, opens the refresh token (and client secret), asks the token endpoint
 * (`tokenRequest`, `readTokenAnswer`), seals what came back and writes the credential at the
 * version it read (`credentialAfterRefresh`: a user's update meanwhile is never overwritten), with
 * `vault_credential.refresh_failed` in the same write when refreshing has just failed. Tokens and
 * secrets never reach a log line, an event or an answer.
 */
export class CredentialRefresher {
  private readonly holder = `vault-refresher:${randomUUID()}`;
  private readonly ticker: BatchTicker;

  constructor(private readonly d: CredentialRefresherDeps) {
    this.ticker = new BatchTicker({ tick: () => this.tick(), batchSize: d.options.batchSize, log: d.log, what: 'vault credential refresh' });
  }

  /** Refreshes the credentials due now (up to one batch) if this gateway holds the lease; returns how many it tried. */
  async tick(): Promise<number> {
    const due = await this.d.vaults.refreshDue(this.d.clock.now().toISOString(), this.d.options.batchSize);
    let tried = 0;
    for (const credential of due) {
      // Taken or renewed before each exchange (nothing due, no lease write): the lease outlives the request it covers (see `leaseMs`).
      if (!(await this.holdLease())) break;
      if (await this.refresh(credential)) tried++;
    }
    return tried;
  }

  /** Ticks every `intervalMs`, and again at once while a batch came back full. */
  start(intervalMs: number): void {
    this.ticker.start(intervalMs);
  }

  /** Stops ticking, waits for the exchange in flight and gives the lease up, so another gateway takes over at once. */
  async stop(): Promise<void> {
    await this.ticker.stop();
    await this.d.leases.release(REFRESHER_LEASE, this.holder);
  }

  private async holdLease(): Promise<boolean> {
    return (await this.d.leases.acquire(REFRESHER_LEASE, this.holder, this.d.clock.now(), this.d.options.leaseMs)) !== null;
  }

  /** One exchange for a credential read as due (checked again: the scan and the clock may disagree); false when there was none to make. */
  private async refresh(started: CredentialRecord): Promise<boolean> {
    const at = this.d.clock.now();
    const { auth, refresh } = started;
    if (!refreshDue(started, at) || auth.type !== 'mcp_oauth' || !auth.refresh || !refresh) return false;
    const secrets = this.open(started, refresh);
    const outcome: RefreshOutcome =
      secrets === null
        ? {
            kind: 'failed',
            definitive: true,
            error: { kind: 'failed', message: 'the refresh token or client secret does not open (its key is not in BERTH_SECRET_KEYS): update the credential with a new refresh_token', http_response: null },
          }
        : readTokenAnswer(await this.d.endpoint.post(tokenRequest(auth.refresh, secrets)), [secrets.refresh_token, secrets.client_secret ?? '']);
    const result: AttemptResult = outcome.kind === 'refreshed' ? { kind: 'refreshed', grant: this.sealed(started.id, outcome.grant, at) } : outcome;
    await this.store(started, result, at);
    return true;
  }

  /** Writes the attempt's result at the version read, reading again after a conflict; a user's new tokens meanwhile win (nothing is written). */
  private async store(started: CredentialRecord, result: AttemptResult, at: Date): Promise<void> {
    const ids = { credential_id: started.id, vault_id: started.vault_id };
    for (let attempt = 1; attempt <= STORE_ATTEMPTS; attempt++) {
      const current = attempt === 1 ? started : await this.d.vaults.getCredential(started.owner_id, started.vault_id, started.id);
      const after = current === null ? null : credentialAfterRefresh(current, started, result, at, this.d.options.policy);
      if (current === null || after === null) {
        this.d.metrics.refreshes.inc({ outcome: 'superseded' });
        this.d.log.info('a vault credential changed during its refresh; the change is kept', ids);
        return;
      }
      const webhooks = after.failed
        ? await this.d.webhooks.plan({ type: 'vault_credential.refresh_failed', id: started.id, ownerId: started.owner_id, vaultId: started.vault_id, at: at.toISOString() })
        : [];
      try {
        await this.d.vaults.updateCredential(after.credential, credentialVersion(current), webhooks);
      } catch (e) {
        if (e instanceof ConcurrencyError) continue;
        throw e;
      }
      this.report(after.credential, ids);
      return;
    }
    this.d.log.warn('a vault credential kept changing during its refresh; its result was not stored', ids);
  }

  private report(credential: CredentialRecord, ids: Readonly<Record<string, string>>): void {
    const state = credential.refresh?.state;
    if (!state) return;
    const outcome = state.status === 'scheduled' ? 'refreshed' : state.status;
    this.d.metrics.refreshes.inc({ outcome });
    if (outcome === 'refreshed') {
      this.d.log.info('vault credential refreshed', { ...ids, expires_at: credential.auth.type === 'mcp_oauth' ? credential.auth.expires_at : null, next_attempt_at: state.next_attempt_at });
    } else {
      const error = state.last_error;
      this.d.log.warn(`vault credential refresh ${outcome}`, { ...ids, error: error?.message ?? null, status_code: error?.http_response?.status_code ?? null, next_attempt_at: state.next_attempt_at });
    }
  }

  /** The refresh secrets, opened; null when they do not open (a key removed from BERTH_SECRET_KEYS, a value tampered with). */
  private open(credential: CredentialRecord, refresh: NonNullable<CredentialRecord['refresh']>): RefreshSecrets | null {
    try {
      return {
        refresh_token: this.d.secrets.open(refresh.refresh_token, refreshSecretAad(credential.id, 'refresh_token')),
        client_secret: refresh.client_secret === null ? null : this.d.secrets.open(refresh.client_secret, refreshSecretAad(credential.id, 'client_secret')),
      };
    } catch (e) {
      this.d.log.error('a vault credential’s refresh secrets do not open', { credential_id: credential.id, vault_id: credential.vault_id, code: (e as { code?: string }).code ?? null });
      return null;
    }
  }

  /** The new tokens sealed as the API seals them; the token expires `expires_in` after the request was sent (the earliest it can). */
  private sealed(credentialId: string, grant: TokenGrant, at: Date): SealedGrant {
    return {
      secret: this.d.secrets.seal(encodeCredentialSecret({ value: grant.accessToken }), credentialId),
      refreshToken: grant.refreshToken === null ? null : this.d.secrets.seal(grant.refreshToken, refreshSecretAad(credentialId, 'refresh_token')),
      expiresAt: grant.expiresInMs === null ? null : new Date(at.getTime() + grant.expiresInMs).toISOString(),
      lifetimeMs: grant.expiresInMs,
    };
  }
}
