import type { IncomingMessage } from 'node:http';
import { bodyVariablesFor, withVariablesInBody, type VariableCredential } from '@berth/egress-domain';

/** Bodies the egress reads to put vault secrets in are held in memory up to this size. */
export const MAX_REWRITTEN_BODY = 8 * 1024 * 1024;

/**
 * A request body with the secrets of the session's body credentials for `host` in place of their
 * placeholders (`injection_location.body`), read whole (the length changes); `too_large` past
 * `MAX_REWRITTEN_BODY`; null when no such credential applies, so the body streams untouched.
 */
export async function bodyWithVariables(req: IncomingMessage, variables: readonly VariableCredential[], host: string): Promise<Buffer | 'too_large' | null> {
  const applying = bodyVariablesFor(variables, host);
  if (applying.length === 0) return null;
  const body = await readBody(req, MAX_REWRITTEN_BODY);
  return body === null ? 'too_large' : withVariablesInBody(body, applying);
}

/** The whole request body, or null once it exceeds `limit` bytes (the rest is not read). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      req.off('data', onData);
      req.pause();
      resolve(null);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

export const tooLargeMessage = `Berth egress: a request body a vault credential is put in may be at most ${MAX_REWRITTEN_BODY} bytes.`;
