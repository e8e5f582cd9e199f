import { createHmac } from 'node:crypto';

/** Signing secrets look like Standard Webhooks secrets: `whsec_` + base64 of the key bytes. */
export const SIGNING_SECRET_PREFIX = 'whsec_';

export const signingSecretFrom = (keyBytes: Uint8Array): string => `${SIGNING_SECRET_PREFIX}${Buffer.from(keyBytes).toString('base64')}`;

/**
 * The headers of one signed delivery, as Standard Webhooks (and so `client.beta.webhooks.unwrap()`)
 * verifies them: `webhook-id` (the event id, the same on every retry, for receivers to dedupe),
 * `webhook-timestamp` (seconds, the time of this attempt: receivers refuse ones older than about
 * 5 minutes, so every retry is signed anew) and `webhook-signature` = `v1,` + base64 of
 * HMAC-SHA256(key, `<id>.<timestamp>.<body>`).
 */
export function signedWebhookHeaders(secret: string, id: string, timestampSeconds: number, body: string): Readonly<Record<string, string>> {
  const key = Buffer.from(secret.startsWith(SIGNING_SECRET_PREFIX) ? secret.slice(SIGNING_SECRET_PREFIX.length) : secret, 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestampSeconds), 'webhook-signature': `v1,${signature}` };
}
