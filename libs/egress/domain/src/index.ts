export { canonicalAddress, classifyAddress, isLocalName, isPublicAddress, type AddressClass } from '@berth/core';
export { hostMatches } from './hosts';
export { isHostName, isHostPattern, isIpLiteral, normalizeHost } from '@berth/contracts';
export { isPackageRegistryHost, PACKAGE_REGISTRY_HOSTS } from './package-registries';
export {
  decideHost,
  egressPolicyFrom,
  mcpHostsFrom,
  networkingFrom,
  type AllowingSetting,
  type EgressPolicy,
  type HostDecision,
  type Networking,
} from './networking-policy';
export { describeDenial, type DenialInput, type DenialReason, type EgressDenial } from './denial';
export { parseAbsoluteTarget, parseAuthority, parseTunnelledTarget, type AbsoluteTarget, type Target } from './targets';
export {
  DEFAULT_MODEL_KEY_NAME,
  endToEndHeaders,
  isModelKeyName,
  modelEndpointFrom,
  modelErrorResponse,
  modelRequestHeaders,
  modelUpstreamUrl,
  type HeaderMap,
  type ModelEndpoint,
  type ModelKeyHeader,
  type ServerModelSettings,
} from './model-route';
export { credentialExpired, credentialFor, expiredCredentialDenial, terminatesTls, withCredential, type BoundCredential } from './vault-credentials';
export { bodyVariablesFor, variableTerminatesTls, withVariables, withVariablesInBody, type VariableCredential } from './variable-credentials';
export { describeBuildDenial, imageBuildGrantFrom, imageBuildHosts, imageBuildPolicy, type ImageBuildGrant } from './image-build-policy';
