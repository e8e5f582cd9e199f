import { urlRefusal, type TargetPolicy } from '@berth/webhooks-domain';

/**
 * Why Berth may not send a credential's refresh token to `url`, or null when it may. A token
 * endpoint is a URL an API user chose, reached from the gateway's network, so it follows the rule
 * webhook deliveries follow (public addresses only, checked again on every address the name
 * resolves to when connecting: `guardedLookup`), and it must be `https://` since the refresh token
 * and client secret travel in the request; the operator's `BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS`
 * (a private network of services; the tests' loopback endpoints) lifts both.
 */
export function tokenEndpointRefusal(url: string, policy: TargetPolicy): string | null {
  const refused = urlRefusal(url, policy);
  if (refused !== null) return `${refused}; token endpoints must be public addresses (the operator can allow private ones with BERTH_WEBHOOK_ALLOW_PRIVATE_TARGETS=true)`;
  if (!policy.allowPrivateTargets && new URL(url).protocol !== 'https:') return 'must be an https:// URL (the refresh token and client secret travel in the request)';
  return null;
}
