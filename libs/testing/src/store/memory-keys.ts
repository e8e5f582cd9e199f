import { ConcurrencyError } from '@berth/core';
import type { ApiKeyRecord, ApiKeys, IdempotencyKeys, IdempotencyRecord } from '@berth/ports';

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
