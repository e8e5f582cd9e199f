import type { RouteSpec } from '../../src/http/route';
import { RouteTable } from '../../src/http/route-table';
import type { GatewayHarness } from './gateway-harness';

export type OwnedIds = Readonly<{
  agentId: string;
  envId: string;
  sessionId: string;
  fileId: string;
  resourceId: string;
  webhookId: string;
  deliveryId: string;
  vaultId: string;
  credentialId: string;
  natsCredentialId: string;
}>;

/** Every route the running app serves, from Nest's own controller registry. */
export const routeTable = (gw: GatewayHarness): RouteSpec[] => gw.app.get(RouteTable).routes();

type ExpressLayer = { route?: { path: string; methods: Record<string, boolean> } };

/** What Express actually routes (`GET /v1/agents/:agent_id`), to prove the route table misses nothing. */
export function expressRoutes(gw: GatewayHarness): string[] {
  const express = gw.app.getHttpAdapter().getInstance() as { router: { stack: ExpressLayer[] } };
  return express.router.stack
    .filter((layer) => layer.route)
    .flatMap((layer) => Object.keys(layer.route?.methods ?? {}).map((m) => `${m.toUpperCase()} ${layer.route?.path}`))
    .sort();
}

/** Fills `{agent_id}`-style placeholders with the given resource ids. */
export function concretePath(route: RouteSpec, ids: OwnedIds): string {
  return route.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (name === 'agent_id') return ids.agentId;
    if (name === 'environment_id') return ids.envId;
    if (name === 'session_id') return ids.sessionId;
    if (name === 'file_id') return ids.fileId;
    if (name === 'resource_id') return ids.resourceId;
    if (name === 'nats_credential_id') return ids.natsCredentialId;
    if (name === 'webhook_id') return ids.webhookId;
    if (name === 'delivery_id') return ids.deliveryId;
    if (name === 'vault_id') return ids.vaultId;
    if (name === 'credential_id') return ids.credentialId;
    throw new Error(`route ${route.path}: no sample id for {${name}}; add one in route-samples.ts`);
  });
}

/** A valid body for each route that takes one, so a test reaches the ownership check, not validation. */
export function validBody(route: RouteSpec, ids: OwnedIds): unknown {
  if (!route.body) return undefined;
  const key = `${route.method} ${route.path}`;
  const samples: Record<string, unknown> = {
    'POST /v1/agents': { name: 'n', model: 'claude-sonnet-4-5' },
    'POST /v1/agents/{agent_id}': { system: 'changed' },
    'POST /v1/environments': { name: 'n' },
    'POST /v1/environments/{environment_id}': { name: 'changed' },
    'POST /v1/sessions': { agent: ids.agentId, environment_id: ids.envId, vault_ids: [ids.vaultId] },
    'POST /v1/sessions/{session_id}': { title: 'changed' },
    'POST /v1/nats_credentials': { name: 'n' },
    'POST /v1/sessions/{session_id}/fork': {},
    'POST /v1/sessions/{session_id}/events': { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] },
    'POST /v1/sessions/{session_id}/resources': { type: 'file', file_id: ids.fileId, mount_path: '/home/agent/copy.txt' },
    'POST /v1/sessions/{session_id}/resources/{resource_id}': { authorization_token: 'ghp_rotated' },
    'POST /v1/webhooks': { url: 'https://hooks.example.com/berth', enabled_events: ['session.created'] },
    'POST /v1/webhooks/{webhook_id}': { name: 'changed' },
    'POST /v1/vaults': { display_name: 'n' },
    'POST /v1/vaults/{vault_id}': { display_name: 'changed' },
    'POST /v1/vaults/{vault_id}/credentials': { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp2.example.com/', token: 'tok_other' } },
    'POST /v1/vaults/{vault_id}/credentials/{credential_id}': { auth: { type: 'static_bearer', token: 'tok_changed' } },
  };
  if (!(key in samples)) throw new Error(`route ${key}: no sample body; add one in route-samples.ts`);
  return samples[key];
}
