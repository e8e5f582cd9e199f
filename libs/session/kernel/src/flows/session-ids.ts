import { createHash } from 'node:crypto';
import { IdPrefix } from '@berth/core';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/**
 * The session id an idempotency key stands for: derived from (owner, key), so a retried create
 * lands on the session it already made, and another owner's identical key is another session.
 */
export function sessionIdForIdempotencyKey(ownerId: string, key: string): string {
  const digest = createHash('sha256').update(`conversation-create\u0000${ownerId}\u0000${key}`).digest();
  let id = '';
  for (let i = 0; i < 26; i++) id += CROCKFORD[digest[i] % 32];
  return `${IdPrefix.session}_${id}`;
}
