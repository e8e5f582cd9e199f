import { z } from 'zod';

/**
 * A URL Berth itself sends requests to on a user's behalf (a webhook endpoint, an OAuth token
 * endpoint): absolute http(s), with no credentials (they belong in the sealed secrets) and no
 * fragment. Where it may point is the target policy's business, checked where it is used.
 */
export const OutboundUrlSchema = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .max(2048)
  // Checked after the URL check even when that failed: a value that is no URL at all is that issue alone.
  .refine((u) => {
    if (!URL.canParse(u)) return true;
    const url = new URL(u);
    return url.username === '' && url.password === '' && url.hash === '';
  }, 'must not hold credentials or a fragment');
