import { readEnvironmentConfig } from '@berth/contracts';
import type { EnvironmentRecord } from '@berth/ports';

/** `BetaEnvironment`; `config` also carries Berth's sandbox fields (harness, image, network, …), as stored (upgraded when older). */
export const renderEnvironment = (env: EnvironmentRecord): Record<string, unknown> => ({
  type: 'environment',
  id: env.id,
  name: env.name,
  description: env.description,
  config: readEnvironmentConfig(env.config),
  metadata: env.metadata,
  // One organization per Berth install: every environment is organization-scoped.
  scope: 'organization',
  created_at: env.created_at,
  updated_at: env.updated_at,
  archived_at: env.archived_at,
});
