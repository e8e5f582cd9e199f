import { z } from 'zod';
import { HarnessKindSchema } from '../content';
import { isHostPattern, normalizeHost } from '../host-names';
import { DEFAULT_SANDBOX_NETWORK, SANDBOX_NETWORK_INPUTS, SANDBOX_NETWORKS, sandboxNetworkOf, type SandboxNetwork } from '../sandbox-network';
import type { ConfigIssue } from './config-issues';
import { MetadataPatchSchema, MetadataSchema } from './metadata';

/**
 * An environment's `config`: the Managed Agents shape (`cloud` with `networking` and `packages`,
 * or `self_hosted`) plus Berth's sandbox fields. `EnvironmentConfigParamsSchema` is what the API
 * accepts, `EnvironmentConfig` what it stores, returns and the sandbox-manager reads
 * (`readEnvironmentConfig` also upgrades records stored by the previous release).
 */

const SandboxNetworkSchema = z.enum(SANDBOX_NETWORKS as readonly [SandboxNetwork, ...SandboxNetwork[]]);
/** What the API takes for `config.network`: the modes, and `bridge` (the earlier default), read as `egress`. */
const SandboxNetworkParamsSchema = z.enum(SANDBOX_NETWORK_INPUTS as readonly [string, ...string[]]);

export const RESOURCE_LIMITS = { memory_mb: [64, 262_144], cpus: [0.1, 64], pids: [16, 65_536], workspace_mb: [64, 1_048_576] } as const;
export const IDLE_TIMEOUT_LIMITS = [10, 604_800] as const;
export const WARM_POOL_LIMIT = 16;
/** Per-turn workspace snapshots (what a fork starts from): how many a session keeps, and how many MiB they may use together. */
export const WORKSPACE_SNAPSHOT_LIMITS = { keep: [0, 64], max_mb: [1, 1_048_576] } as const;

export const ENVIRONMENT_DEFAULTS = {
  harness: 'claude-code',
  network: DEFAULT_SANDBOX_NETWORK,
  resources: { memory_mb: 2048, cpus: 2, pids: 512 },
  idle_timeout_seconds: 900,
  workspace_snapshots: { keep: 10, max_mb: 2048 },
} as const;

// Image references: registry/name[:tag][@digest]; nothing a shell or Docker would read as an option.
const ImageRefSchema = z.string().max(400).regex(/^[a-z0-9][a-z0-9._\-/:]{0,254}(@sha256:[a-f0-9]{64})?$/, 'must be a Docker image reference like berth/harness:latest');

/**
 * Package names as each manager spells them, optionally with a version: never an option (leading
 * `-`), a path, a URL or a VCS reference, so an install installs a registry package and nothing else.
 */
const packageList = (pattern: RegExp, example: string) => z.array(z.string().min(1).max(214).regex(pattern, `must be a package name like ${example}`)).max(256);
const PACKAGE_PATTERNS = {
  apt: packageList(/^[a-z0-9][a-z0-9+.-]*(=[A-Za-z0-9.+~:-]+)?$/, 'ripgrep or jq=1.6-2.1'),
  npm: packageList(/^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*(@[A-Za-z0-9.^~<>=*|_-]+)?$/, 'cowsay or typescript@5.9.3'),
  pip: packageList(/^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?((==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!_-]+)?$/, 'requests or numpy==2.1.0'),
  cargo: packageList(/^[A-Za-z0-9][A-Za-z0-9_-]*(@[A-Za-z0-9.^~<>=*_-]+)?$/, 'ripgrep'),
  gem: packageList(/^[A-Za-z0-9][A-Za-z0-9._-]*(:[A-Za-z0-9.~<>= ]+)?$/, 'rake'),
  go: packageList(/^[a-z0-9][a-z0-9._~\-/]*(@[A-Za-z0-9._~-]+)?$/, 'golang.org/x/tools/gopls@latest'),
};
export const PACKAGE_MANAGERS = ['apt', 'cargo', 'gem', 'go', 'npm', 'pip'] as const;
export type PackageManager = (typeof PACKAGE_MANAGERS)[number];
/** Package managers the sandbox image build installs from (the others are refused: `environmentConfigIssues`). */
export const BUILT_PACKAGE_MANAGERS = ['apt', 'npm', 'pip'] as const satisfies readonly PackageManager[];

const NetworkingParamsSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('unrestricted') }),
  z.strictObject({
    type: z.literal('limited'),
    allowed_hosts: z
      .array(z.string().min(1).max(253).refine(isHostPattern, 'must be a host name, a *.domain wildcard or an IP address'))
      .max(256)
      .nullish(),
    allow_mcp_servers: z.boolean().nullish(),
    allow_package_managers: z.boolean().nullish(),
  }),
]);

const PackagesParamsSchema = z.strictObject({
  type: z.literal('packages').optional(),
  apt: PACKAGE_PATTERNS.apt.nullish(),
  cargo: PACKAGE_PATTERNS.cargo.nullish(),
  gem: PACKAGE_PATTERNS.gem.nullish(),
  go: PACKAGE_PATTERNS.go.nullish(),
  npm: PACKAGE_PATTERNS.npm.nullish(),
  pip: PACKAGE_PATTERNS.pip.nullish(),
});

/** A field earlier releases accepted and this one does not: a 400 that says where it went. */
const moved = (message: string) => z.unknown().refine(() => false, { message }).optional();

const ModelEndpointParamsSchema = z.strictObject({
  base_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).max(2048).nullish(),
  api_key_env: z
    .string()
    // Only the model-key namespace: naming any other variable of the sandbox-manager would hand
    // its value (e.g. the store URL with its password) to a harness and a base_url the caller picks.
    .regex(/^BERTH_MODEL_(API_KEY|KEY_[A-Z0-9_]{1,100})$/, 'must be BERTH_MODEL_API_KEY or BERTH_MODEL_KEY_<NAME>')
    .nullish(),
  model: moved('the model id is the agent\'s `model`; an environment only says where the model is reached (base_url, api_key_env)'),
});

const SandboxParamsShape = {
  harness: HarnessKindSchema.optional(),
  image: ImageRefSchema.nullish(),
  network: SandboxNetworkParamsSchema.optional(),
  resources: z
    .strictObject({
      memory_mb: z.number().int().min(RESOURCE_LIMITS.memory_mb[0]).max(RESOURCE_LIMITS.memory_mb[1]).nullish(),
      cpus: z.number().min(RESOURCE_LIMITS.cpus[0]).max(RESOURCE_LIMITS.cpus[1]).nullish(),
      pids: z.number().int().min(RESOURCE_LIMITS.pids[0]).max(RESOURCE_LIMITS.pids[1]).nullish(),
      /** Most MiB a session's workspace (/workspace and /mnt/session) may hold. */
      workspace_mb: z.number().int().min(RESOURCE_LIMITS.workspace_mb[0]).max(RESOURCE_LIMITS.workspace_mb[1]).nullish(),
    })
    .nullish(),
  idle_timeout_seconds: z.number().int().min(IDLE_TIMEOUT_LIMITS[0]).max(IDLE_TIMEOUT_LIMITS[1]).nullish(),
  warm_pool_size: z.number().int().min(0).max(WARM_POOL_LIMIT).nullish(),
  /** Per-turn workspace snapshots, the start of a fork: `keep` 0 turns them off. */
  workspace_snapshots: z
    .strictObject({
      keep: z.number().int().min(WORKSPACE_SNAPSHOT_LIMITS.keep[0]).max(WORKSPACE_SNAPSHOT_LIMITS.keep[1]).nullish(),
      max_mb: z.number().int().min(WORKSPACE_SNAPSHOT_LIMITS.max_mb[0]).max(WORKSPACE_SNAPSHOT_LIMITS.max_mb[1]).nullish(),
    })
    .nullish(),
  /** Where the harness reaches its model; the key is named by a variable of the sandbox-manager, never stored. */
  model: ModelEndpointParamsSchema.nullish(),
  permission_mode: moved('tool confirmation is set per tool on the agent: tools[].default_config.permission_policy or tools[].configs[].permission_policy'),
};

export const EnvironmentConfigParamsSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('cloud'), networking: NetworkingParamsSchema.nullish(), packages: PackagesParamsSchema.nullish(), ...SandboxParamsShape }),
  z.strictObject({ type: z.literal('self_hosted'), ...SandboxParamsShape }),
]);
export type EnvironmentConfigParams = z.infer<typeof EnvironmentConfigParamsSchema>;

// ---- The stored (and returned, and read) shape.

const NetworkingSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('unrestricted') }),
  z.object({ type: z.literal('limited'), allowed_hosts: z.array(z.string()), allow_mcp_servers: z.boolean(), allow_package_managers: z.boolean() }),
]);
const PackagesSchema = z.object({
  type: z.literal('packages'),
  apt: z.array(z.string()),
  cargo: z.array(z.string()),
  gem: z.array(z.string()),
  go: z.array(z.string()),
  npm: z.array(z.string()),
  pip: z.array(z.string()),
});
export type EnvironmentPackages = z.infer<typeof PackagesSchema>;

const SandboxShape = {
  harness: HarnessKindSchema,
  /** null: the sandbox-manager's default image. */
  image: z.string().nullable(),
  network: SandboxNetworkSchema,
  resources: z.object({
    memory_mb: z.number(),
    cpus: z.number(),
    pids: z.number(),
    /** null or absent: the sandbox-manager's default workspace size. */
    workspace_mb: z.number().int().nullish(),
  }),
  idle_timeout_seconds: z.number().int(),
  /** null: the sandbox-manager's default (`BERTH_WARM_POOL_SIZE`). */
  warm_pool_size: z.number().int().nullable(),
  workspace_snapshots: z.object({ keep: z.number().int(), max_mb: z.number().int() }),
  /** null: the sandbox-manager's default model endpoint. */
  model: z.object({ base_url: z.string().nullable(), api_key_env: z.string().nullable() }).nullable(),
};

export const EnvironmentConfigSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('cloud'), networking: NetworkingSchema, packages: PackagesSchema, ...SandboxShape }),
  z.object({ type: z.literal('self_hosted'), ...SandboxShape }),
]);
export type EnvironmentConfig = z.infer<typeof EnvironmentConfigSchema>;

const NO_PACKAGES: EnvironmentPackages = { type: 'packages', apt: [], cargo: [], gem: [], go: [], npm: [], pip: [] };

type Nullish<T> = T | null | undefined;
/** Update semantics for one field: absent keeps, null resets to the default, a value replaces. */
const field = <T>(value: Nullish<T>, current: T, fallback: T): T => (value === undefined ? current : value === null ? fallback : value);

function sandboxFields(given: EnvironmentConfigParams, current: Omit<EnvironmentConfig, 'type' | 'networking' | 'packages'> | null) {
  const base = current ?? { ...ENVIRONMENT_DEFAULTS, image: null, warm_pool_size: null, model: null };
  const ds = ENVIRONMENT_DEFAULTS.workspace_snapshots;
  const ws = given.workspace_snapshots;
  const workspace_snapshots =
    ws === undefined
      ? base.workspace_snapshots
      : ws === null
        ? { ...ds }
        : { keep: field(ws.keep, base.workspace_snapshots.keep, ds.keep), max_mb: field(ws.max_mb, base.workspace_snapshots.max_mb, ds.max_mb) };
  const d = ENVIRONMENT_DEFAULTS.resources;
  const r = given.resources;
  const resources =
    r === undefined
      ? base.resources
      : r === null
        ? { ...d }
        : {
            memory_mb: field(r.memory_mb, base.resources.memory_mb, d.memory_mb),
            cpus: field(r.cpus, base.resources.cpus, d.cpus),
            pids: field(r.pids, base.resources.pids, d.pids),
            workspace_mb: field(r.workspace_mb, 'workspace_mb' in base.resources ? (base.resources.workspace_mb ?? null) : null, null),
          };
  const m = given.model;
  const endpoint = m === undefined ? base.model : m === null ? null : { base_url: field(m.base_url, base.model?.base_url ?? null, null), api_key_env: field(m.api_key_env, base.model?.api_key_env ?? null, null) };
  return {
    harness: given.harness ?? base.harness,
    image: field(given.image, base.image, null),
    network: (given.network === undefined ? null : sandboxNetworkOf(given.network)) ?? base.network,
    resources,
    idle_timeout_seconds: field(given.idle_timeout_seconds, base.idle_timeout_seconds, ENVIRONMENT_DEFAULTS.idle_timeout_seconds),
    warm_pool_size: field(given.warm_pool_size, base.warm_pool_size, null),
    workspace_snapshots,
    model: endpoint !== null && endpoint.base_url === null && endpoint.api_key_env === null ? null : endpoint,
  };
}

function networkingOf(given: Nullish<z.infer<typeof NetworkingParamsSchema>>, current: EnvironmentConfig | null): z.infer<typeof NetworkingSchema> {
  if (given === undefined && current?.type === 'cloud') return current.networking;
  if (!given || given.type === 'unrestricted') return { type: 'unrestricted' };
  return { type: 'limited', allowed_hosts: (given.allowed_hosts ?? []).map(normalizeHost), allow_mcp_servers: given.allow_mcp_servers ?? false, allow_package_managers: given.allow_package_managers ?? false };
}

function packagesOf(given: Nullish<z.infer<typeof PackagesParamsSchema>>, current: EnvironmentConfig | null): EnvironmentPackages {
  const base = current?.type === 'cloud' ? current.packages : NO_PACKAGES;
  if (given === undefined) return base;
  if (given === null) return NO_PACKAGES;
  const list = (name: (typeof PACKAGE_MANAGERS)[number]) => field(given[name], base[name], []);
  return { type: 'packages', apt: list('apt'), cargo: list('cargo'), gem: list('gem'), go: list('go'), npm: list('npm'), pip: list('pip') };
}

/**
 * The stored config after a create (`current` null) or an update: fields given replace, fields left
 * out keep their value, null resets a field to its default; `resources`, `packages` and `model`
 * merge field by field. The caller refuses a change of `type`.
 */
export function environmentConfigFrom(given: EnvironmentConfigParams | null | undefined, current: EnvironmentConfig | null = null): EnvironmentConfig {
  const params: EnvironmentConfigParams = given ?? { type: current?.type ?? 'cloud' };
  const sandbox = sandboxFields(params, current);
  if (params.type === 'self_hosted') return { type: 'self_hosted', ...sandbox };
  return { type: 'cloud', networking: networkingOf(params.networking, current), packages: packagesOf(params.packages, current), ...sandbox };
}

/** What Berth cannot honour in a stored environment config yet. */
export function environmentConfigIssues(config: EnvironmentConfig): ConfigIssue[] {
  if (config.type !== 'cloud') return [];
  const issues: ConfigIssue[] = [];
  for (const manager of PACKAGE_MANAGERS) {
    if (config.packages[manager].length > 0 && !(BUILT_PACKAGE_MANAGERS as readonly string[]).includes(manager)) {
      issues.push({ path: `config.packages.${manager}`, message: `${manager} packages are not supported by Berth yet (the sandbox image installs ${BUILT_PACKAGE_MANAGERS.join(', ')})` });
    }
  }
  return issues;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Records of the previous release stored `permission_mode` (now per tool on the agent) and
 * `model.model` (now the agent's `model`), had no `warm_pool_size` or `workspace_snapshots`, allowed an idle timeout
 * under 10 s and had `network: bridge` (now `egress`). Those fields are dropped, the missing one
 * defaulted, the timeout raised to the minimum, the network read as its mode.
 */
function upgradeStored(raw: unknown): unknown {
  if (!isRecord(raw)) return raw;
  const { permission_mode: _dropped, ...config } = raw;
  const model = isRecord(config['model']) ? { base_url: config['model']['base_url'] ?? null, api_key_env: config['model']['api_key_env'] ?? null } : (config['model'] ?? null);
  const idle = config['idle_timeout_seconds'];
  return {
    ...config,
    model: isRecord(model) && model['base_url'] === null && model['api_key_env'] === null ? null : model,
    warm_pool_size: config['warm_pool_size'] ?? null,
    workspace_snapshots: config['workspace_snapshots'] ?? { ...ENVIRONMENT_DEFAULTS.workspace_snapshots },
    network: sandboxNetworkOf(config['network']) ?? DEFAULT_SANDBOX_NETWORK,
    idle_timeout_seconds: typeof idle === 'number' ? Math.max(IDLE_TIMEOUT_LIMITS[0], idle) : ENVIRONMENT_DEFAULTS.idle_timeout_seconds,
  };
}

/** A stored environment config, typed (upgrading a record of the previous release on the way). */
export const readEnvironmentConfig = (stored: unknown): EnvironmentConfig => EnvironmentConfigSchema.parse(upgradeStored(stored));

/** One organization per Berth install: `account` scope has nothing to mean. */
const ScopeSchema = z.enum(['organization', 'account']).refine((s) => s === 'organization', 'only organization scope exists in Berth (one organization per install)');

/** `POST /v1/environments`. */
export const EnvironmentCreateParamsSchema = z.strictObject({
  name: z.string().min(1).max(256),
  description: z.string().max(2048).nullish(),
  config: EnvironmentConfigParamsSchema.nullish(),
  metadata: MetadataSchema.optional(),
  scope: ScopeSchema.nullish(),
});
export type EnvironmentCreateParams = z.infer<typeof EnvironmentCreateParamsSchema>;

/** `POST /v1/environments/{id}`: `config` fields given replace, others stay (`environmentConfigFrom`). */
export const EnvironmentUpdateParamsSchema = z.strictObject({
  name: z.string().min(1).max(256).nullish(),
  description: z.string().max(2048).nullish(),
  config: EnvironmentConfigParamsSchema.nullish(),
  metadata: MetadataPatchSchema.optional(),
  scope: ScopeSchema.nullish(),
});
export type EnvironmentUpdateParams = z.infer<typeof EnvironmentUpdateParamsSchema>;
