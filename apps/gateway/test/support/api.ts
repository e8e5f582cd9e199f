/** Plain HTTP calls for tests that look below the SDK (status codes, raw bodies, headers). */
export async function call(base: string, key: string | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { ...(key ? { 'x-api-key': key } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { ...(await answerOf(res)), headers: res.headers };
}

/** The status and body of an answer, the body parsed when it is JSON. */
async function answerOf(res: Response) {
  const text = await res.text();
  // Tests assert on response bodies field by field; they are untyped JSON by nature.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, json, text };
}

/** `POST /v1/files` with one `file` part, as a browser or the SDK sends it. */
export async function upload(base: string, key: string, filename: string, content: string | Uint8Array, fields: Record<string, string> = {}) {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  form.append('file', new Blob([typeof content === 'string' ? content : new Uint8Array(content)]), filename);
  return answerOf(await fetch(`${base}/v1/files`, { method: 'POST', headers: { 'x-api-key': key }, body: form }));
}

/** An agent, an environment, a session, an uploaded file and the session's resource for it, owned by `key`'s owner. */
export async function seedSession(base: string, key: string) {
  const agent = await call(base, key, 'POST', '/v1/agents', { name: 'a', model: 'claude-sonnet-4-5' });
  const env = await call(base, key, 'POST', '/v1/environments', { name: 'e' });
  const session = await call(base, key, 'POST', '/v1/sessions', { agent: agent.json.id, environment_id: env.json.id });
  if (session.status !== 200) throw new Error(`seed failed: ${session.text}`);
  const file = await upload(base, key, 'seed.txt', 'seeded');
  if (file.status !== 200) throw new Error(`seed failed: ${file.text}`);
  const resource = await call(base, key, 'POST', `/v1/sessions/${session.json.id}/resources`, { type: 'file', file_id: file.json.id });
  if (resource.status !== 200) throw new Error(`seed failed: ${resource.text}`);
  const natsCredential = await call(base, key, 'POST', '/v1/nats_credentials', { name: 'seed' });
  if (natsCredential.status !== 200) throw new Error(`seed failed: ${natsCredential.text}`);
  return {
    agentId: agent.json.id as string,
    envId: env.json.id as string,
    sessionId: session.json.id as string,
    fileId: file.json.id as string,
    resourceId: resource.json.id as string,
    natsCredentialId: natsCredential.json.id as string,
  };
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
