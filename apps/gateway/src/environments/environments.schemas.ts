import { z } from 'zod';
import { HarnessKindSchema, isHostPattern, PermissionModeSchema } from '@berth/contracts';
import { defineRoute } from '../http/route';
import { MetadataPatchSchema, MetadataSchema, PageQueryShape, QueryBool, idParam } from '../http/schemas';

const names = z.array(z.string().min(1).max(256)).max(256);
const NetworkingSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('unrestricted') }),
  z.object({
    type: z.literal('limited'),
    allowed_hosts: z
      .array(z.string().min(1).max(253).refine(isHostPattern, 'must be a host name, a *.domain wildcard or an IP address'))
      .max(256)
      .nullish(),
    allow_mcp_servers: z.boolean().nullish(),
    allow_package_managers: z.boolean().nullish(),
  }),
]);
const PackagesSchema = z.object({
  type: z.literal('packages').optional(),
  apt: names.nullish(),
  cargo: names.nullish(),
  gem: names.nullish(),
  go: names.nullish(),
  npm: names.nullish(),
  pip: names.nullish(),
});

/** Berth's own knobs, next to the Managed Agents fields of `config`. */
const BerthConfigShape = {
  harness: HarnessKindSchema.optional(),
  image: z
    .string()
    .max(256)
    .regex(/^[a-z0-9][a-z0-9._\-/:@]*$/, 'must be a Docker image reference')
    .nullish(),
  /** `bridge`, the earlier default, is read as `egress`. */
  network: z.enum(['egress', 'none', 'host', 'bridge']).optional(),
  resources: z
    .object({
      memory_mb: z.number().int().min(64).max(262_144).optional(),
      cpus: z.number().min(0.1).max(64).optional(),
      pids: z.number().int().min(16).max(65_536).optional(),
    })
    .optional(),
  idle_timeout_seconds: z.number().int().min(0).max(604_800).optional(),
  permission_mode: PermissionModeSchema.optional(),
  /** Model endpoint override for the harness; the key is named by an env var, never stored. */
  model: z
    .object({
      base_url: z
        .url()
        .max(2048)
        .refine((u) => /^https?:\/\//i.test(u), 'must be an http:// or https:// URL')
        .optional(),
      model: z.string().min(1).max(256).optional(),
      api_key_env: z
        .string()
        // Only the model-key namespace: naming any other variable of the sandbox-manager would hand
        // its value (e.g. the store URL with its password) to a harness and a base_url the caller picks.
        .regex(/^BERTH_MODEL_(API_KEY|KEY_[A-Z0-9_]{1,100})$/, 'must be BERTH_MODEL_API_KEY or BERTH_MODEL_KEY_<NAME>')
        .optional(),
    })
    .nullish(),
};

export const EnvironmentConfigSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('cloud'), networking: NetworkingSchema.nullish(), packages: PackagesSchema.nullish(), ...BerthConfigShape }),
  z.object({ type: z.literal('self_hosted'), ...BerthConfigShape }),
]);
export type EnvironmentConfigInput = z.infer<typeof EnvironmentConfigSchema>;

export const EnvironmentCreateBody = z.object({
  name: z.string().min(1).max(256),
  description: z.string().max(2048).nullish(),
  config: EnvironmentConfigSchema.nullish(),
  metadata: MetadataSchema.optional(),
  scope: z.enum(['organization', 'account']).nullish(),
});

export const EnvironmentUpdateBody = z.object({
  name: z.string().min(1).max(256).nullish(),
  description: z.string().max(2048).nullish(),
  config: EnvironmentConfigSchema.nullish(),
  metadata: MetadataPatchSchema.optional(),
  scope: z.enum(['organization', 'account']).nullish(),
});

const EnvIdParams = z.object({ environment_id: idParam('environment_id', 'env') });

export const EnvironmentRoutes = {
  create: defineRoute({ method: 'POST', path: '/v1/environments', tag: 'environments', summary: 'Create an environment', body: EnvironmentCreateBody }),
  list: defineRoute({ method: 'GET', path: '/v1/environments', tag: 'environments', summary: 'List environments', query: z.object({ ...PageQueryShape, include_archived: QueryBool.optional() }) }),
  get: defineRoute({ method: 'GET', path: '/v1/environments/{environment_id}', tag: 'environments', summary: 'Retrieve an environment', params: EnvIdParams }),
  update: defineRoute({ method: 'POST', path: '/v1/environments/{environment_id}', tag: 'environments', summary: 'Update an environment (applies to new sandboxes)', params: EnvIdParams, body: EnvironmentUpdateBody }),
  delete: defineRoute({ method: 'DELETE', path: '/v1/environments/{environment_id}', tag: 'environments', summary: 'Delete an environment', params: EnvIdParams }),
  archive: defineRoute({ method: 'POST', path: '/v1/environments/{environment_id}/archive', tag: 'environments', summary: 'Archive an environment', params: EnvIdParams }),
} as const;
