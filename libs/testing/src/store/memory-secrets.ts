import type { SealedSecret } from '@berth/contracts';
import type { SessionSecrets } from '@berth/ports';

export class MemorySecrets implements SessionSecrets {
  private readonly secrets = new Map<string, Map<string, SealedSecret>>();

  async put(sessionId: string, name: string, sealed: SealedSecret): Promise<void> {
    const of = this.secrets.get(sessionId) ?? new Map<string, SealedSecret>();
    of.set(name, { ...sealed });
    this.secrets.set(sessionId, of);
  }

  async get(sessionId: string, name: string): Promise<SealedSecret | null> {
    return this.secrets.get(sessionId)?.get(name) ?? null;
  }

  async delete(sessionId: string, name?: string): Promise<void> {
    if (name === undefined) this.secrets.delete(sessionId);
    else this.secrets.get(sessionId)?.delete(name);
  }
}
