import { ConcurrencyError } from '@berth/core';
import type { ApiKeyRecord, ApiKeys, IdempotencyKeys, IdempotencyRecord, NatsCredentialRecord, NatsCredentials } from '@berth/ports';

export class MemoryIdempotencyKeys implements IdempotencyKeys {
  private readonly keys = new Map<string, IdempotencyRecord>();

  async claim(record: IdempotencyRecord): Promise<IdempotencyRecord> {
    const id = `${record.owner_id}:${record.key}`;
    if (!this.keys.has(id)) this.keys.set(id, structuredClone(record));
    return structuredClone(this.keys.get(id) as IdempotencyRecord);
  }

  async get(ownerId: string, key: string): Promise<IdempotencyRecord | null> {
    const record = this.keys.get(`${ownerId}:${key}`);
    return record ? structuredClone(record) : null;
  }
}

export class MemoryApiKeys implements ApiKeys {
  private readonly keys = new Map<string, ApiKeyRecord>();

  async insert(key: ApiKeyRecord): Promise<void> {
    if (this.keys.has(key.id) || [...this.keys.values()].some((k) => k.prefix === key.prefix)) {
      throw new ConcurrencyError(`api key ${key.id} or prefix ${key.prefix} already exists`);
    }
    this.keys.set(key.id, structuredClone(key));
  }

  async byPrefix(prefix: string): Promise<ApiKeyRecord | null> {
    const key = [...this.keys.values()].find((k) => k.prefix === prefix);
    return key ? structuredClone(key) : null;
  }

  async list(ownerId: string): Promise<readonly ApiKeyRecord[]> {
    const mine = [...this.keys.values()].filter((k) => k.owner_id === ownerId);
    return structuredClone(mine.sort((a, b) => (a.created_at === b.created_at ? a.id.localeCompare(b.id) : a.created_at < b.created_at ? -1 : 1)));
  }

  async revoke(ownerId: string, id: string, at: string): Promise<boolean> {
    const key = this.keys.get(id);
    if (!key || key.owner_id !== ownerId) return false;
    if (key.revoked_at === null) this.keys.set(id, { ...key, revoked_at: at });
    return true;
  }
}

const byCreation = <T extends { created_at: string; id: string }>(a: T, b: T): number =>
  a.created_at === b.created_at ? a.id.localeCompare(b.id) : a.created_at < b.created_at ? -1 : 1;

export class MemoryNatsCredentials implements NatsCredentials {
  private readonly credentials = new Map<string, NatsCredentialRecord>();

  async insert(credential: NatsCredentialRecord): Promise<void> {
    if (this.credentials.has(credential.id) || [...this.credentials.values()].some((c) => c.public_key === credential.public_key)) {
      throw new ConcurrencyError(`nats credential ${credential.id} or key ${credential.public_key} already exists`);
    }
    this.credentials.set(credential.id, structuredClone(credential));
  }

  async list(ownerId: string): Promise<readonly NatsCredentialRecord[]> {
    return structuredClone([...this.credentials.values()].filter((c) => c.owner_id === ownerId).sort(byCreation));
  }

  async revoke(ownerId: string, id: string, at: string): Promise<NatsCredentialRecord | null> {
    const found = this.credentials.get(id);
    if (!found || found.owner_id !== ownerId) return null;
    if (found.revoked_at === null) this.credentials.set(id, { ...found, revoked_at: at });
    return structuredClone(this.credentials.get(id) as NatsCredentialRecord);
  }

  async revoked(): Promise<readonly NatsCredentialRecord[]> {
    const revoked = [...this.credentials.values()].filter((c) => c.revoked_at !== null);
    return structuredClone(revoked.sort((a, b) => ((a.revoked_at as string) === b.revoked_at ? a.id.localeCompare(b.id) : (a.revoked_at as string) < (b.revoked_at as string) ? -1 : 1)));
  }
}
