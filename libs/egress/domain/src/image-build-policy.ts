import { isHostPattern, normalizeHost } from '@berth/contracts';
import { describeDenial, type DenialInput, type EgressDenial } from './denial';
import type { EgressPolicy } from './networking-policy';
import { PACKAGE_REGISTRY_HOSTS } from './package-registries';

/** What an environment image build may reach (the sandbox-manager writes it beside the build's socket). */
export type ImageBuildGrant = Readonly<{ environmentId: string; ecosystems: readonly string[]; allowedHosts: readonly string[] }>;

type Raw = Readonly<Record<string, unknown>>;
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

/** Reads a grant file's JSON; null when it is not one (the build then gets nothing). */
export function imageBuildGrantFrom(json: unknown): ImageBuildGrant | null {
  if (typeof json !== 'object' || json === null) return null;
  const raw = json as Raw;
  const environmentId = raw['environment_id'];
  if (typeof environmentId !== 'string' || environmentId === '') return null;
  return { environmentId, ecosystems: strings(raw['ecosystems']), allowedHosts: strings(raw['allowed_hosts']).map(normalizeHost).filter(isHostPattern) };
}

/** The hosts a build reaches: the registries of the ecosystems it installs from, then its allowed hosts. */
export function imageBuildHosts(grant: ImageBuildGrant): string[] {
  const registries = grant.ecosystems.flatMap((e) => PACKAGE_REGISTRY_HOSTS[e] ?? []);
  return [...new Set([...registries, ...grant.allowedHosts])];
}

/**
 * A build's policy: limited networking to its hosts, whatever the environment's own networking
 * (the platform rule is the egress's and holds as for every sandbox).
 */
export function imageBuildPolicy(grant: ImageBuildGrant): EgressPolicy {
  return {
    environmentId: grant.environmentId,
    network: 'egress',
    networking: { type: 'limited', allowedHosts: imageBuildHosts(grant), allowPackageManagers: false, allowMcpServers: false },
    mcpHosts: [],
  };
}

/** A refusal as a build sees it: the platform's words, or which hosts a build may reach and how to add one. */
export function describeBuildDenial(grant: ImageBuildGrant, input: Omit<DenialInput, 'environmentId'>): EgressDenial {
  const denial = describeDenial({ ...input, environmentId: grant.environmentId });
  if (input.reason !== 'host_not_allowed') return denial;
  const message =
    `Berth egress refused ${input.host}:${input.port}: the image build of environment ${grant.environmentId} reaches only the package registries of its packages ` +
    `and the environment's allowed hosts (${imageBuildHosts(grant).join(', ')}). Add "${input.host}" to config.networking.allowed_hosts (limited networking), ` +
    'or have the operator name a mirror (BERTH_APT_MIRROR, BERTH_NPM_REGISTRY, BERTH_PIP_INDEX_URL).';
  return { ...denial, setting: 'config.networking.allowed_hosts', message };
}
