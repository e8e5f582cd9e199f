import { credentialPlaceholder } from '@berth/contracts';
import type { VaultStore } from '@berth/ports';

/**
 * The variables a session's `environment_variable` vault credentials give its harness: each
 * credential's `secret_name` holding its placeholder, never the secret (the manager does not open
 * vault secrets; the egress puts them in place of the placeholder on the way out). Read for every
 * turn, so an archived or deleted credential's variable is gone from the next one. Two credentials
 * of one name: the first in vault order is the one set.
 */
export class VaultVariables {
  constructor(private readonly vaults: Pick<VaultStore, 'activeCredentials'>) {}

  async read(ownerId: string, vaultIds: readonly string[]): Promise<Record<string, string>> {
    if (vaultIds.length === 0) return {};
    const variables: Record<string, string> = {};
    for (const record of await this.vaults.activeCredentials(ownerId, vaultIds)) {
      if (record.auth.type !== 'environment_variable' || record.auth.secret_name in variables) continue;
      variables[record.auth.secret_name] = credentialPlaceholder(record.id);
    }
    return variables;
  }
}
