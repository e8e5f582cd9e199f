import { readFileSync } from 'node:fs';
import type { SecretBox } from '@berth/ports';
import { AesGcmSecretBox, parseSecretKeys, UnconfiguredSecretBox } from './secret-box';

/**
 * The secret box a service uses: keys from `BERTH_SECRET_KEYS`, or from the file
 * `BERTH_SECRET_KEYS_FILE` names (a Kubernetes or Compose secret). Without either, a box that
 * refuses to seal or open (503 SECRETS_NOT_CONFIGURED), so a platform without vaults or webhooks
 * still runs. A malformed value stops the service at start.
 */
export function secretBoxFromEnv(env: NodeJS.ProcessEnv = process.env): SecretBox {
  const file = env['BERTH_SECRET_KEYS_FILE'];
  const text = file ? readFileSync(file, 'utf8') : env['BERTH_SECRET_KEYS'];
  if (text === undefined || text.trim() === '') return new UnconfiguredSecretBox();
  return new AesGcmSecretBox(parseSecretKeys(text.trim()));
}
