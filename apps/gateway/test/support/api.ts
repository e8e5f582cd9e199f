/** Plain HTTP calls for tests that look below the SDK (status codes, raw bodies, headers). */
export async function call(base: string, key: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { ...(key ? { 'x-api-key': key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  // Tests assert on response bodies field by field; they are untyped JSON by nature.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** An agent, an environment and a session owned by `key`'s owner. */
export async function seedSession(base: string, key: string) {
  const agent = await call(base, key, 'POST', '/v1/agents', { name: 'a', model: 'claude-sonnet-4-5' });
  const env = await call(base, key, 'POST', '/v1/environments', { name: 'e' });
  const session = await call(base, key, 'POST', '/v1/sessions', { agent: agent.json.id, environment_id: env.json.id });
  if (session.status !== 200) throw new Error(`seed failed: ${session.text}`);
  const natsCredential = await call(base, key, 'POST', '/v1/nats_credentials', { name: 'seed' });
  if (natsCredential.status !== 200) throw new Error(`seed failed: ${natsCredential.text}`);
  return { agentId: agent.json.id as string, envId: env.json.id as string, sessionId: session.json.id as string, natsCredentialId: natsCredential.json.id as string };
}

export const userMessage = (text: string) => ({ events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });

/**
 * One of every resource owned by `key`'s owner, for the route sweeps: a webhook endpoint (at the
 * harness's sink), then an agent, an environment and a session, the session's first delivery, and
 * a vault with a credential.
 */
export async function seedResources(gw: Readonly<{ url: string; sinkUrl: string }>, key: string) {
  const webhook = await call(gw.url, key, 'POST', '/v1/webhooks', { url: gw.sinkUrl, enabled_events: ['session.created'] });
  if (webhook.status !== 200) throw new Error(`seed failed: ${webhook.text}`);
  const ids = await seedSession(gw.url, key);
  let deliveryId = '';
  const deadline = Date.now() + 5_000;
  while (!deliveryId) {
    const log = await call(gw.url, key, 'GET', `/v1/webhooks/${webhook.json.id}/deliveries`);
    deliveryId = log.json?.data?.[0]?.id ?? '';
    if (!deliveryId && Date.now() > deadline) throw new Error('seed failed: no webhook delivery was planned');
    if (!deliveryId) await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const vault = await call(gw.url, key, 'POST', '/v1/vaults', { display_name: 'v' });
  const credential = await call(gw.url, key, 'POST', `/v1/vaults/${vault.json.id}/credentials`, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/sse', token: 'tok_seed' } });
  if (credential.status !== 200) throw new Error(`seed failed: ${credential.text}`);
  return { ...ids, webhookId: webhook.json.id as string, deliveryId, vaultId: vault.json.id as string, credentialId: credential.json.id as string };
}
