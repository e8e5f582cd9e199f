import { credentialExpired, credentialFor, expiredCredentialDenial, type AbsoluteTarget, type BoundCredential, type EgressDenial } from '@berth/egress-domain';
import { isUnbound, type SandboxContext, type SandboxContexts } from './sandbox-contexts';

/** A bound sandbox's context as read now (`fresh`: from the store, past the cache), or null once it is no session's bound sandbox. */
export type ContextReader = (fresh: boolean) => Promise<SandboxContext | null>;

/** Reads the context of the sandbox behind `identity` for requests made after it was first resolved (a tunnel's). */
export const contextReader =
  (contexts: SandboxContexts, identity: string): ContextReader =>
  async (fresh) => {
    const context = fresh ? await contexts.reread(identity) : await contexts.resolve(identity);
    return isUnbound(context) || context.kind !== 'sandbox' ? null : context;
  };

export type CredentialNow = Readonly<{ context: SandboxContext; credential: BoundCredential | null; expired: EgressDenial | null }>;

/**
 * The credential for a request to `target` as the session has it now, and its refusal if its token
 * has expired. Each request reads the session's context (kept `BERTH_EGRESS_CONTEXT_CACHE_MS`), so
 * a token refreshed or updated mid-session is what the next request carries, in a tunnel that
 * outlives its CONNECT too; a token that looks expired is read again from the store first (the
 * refresher may have replaced it since the cache was filled). Null once the sandbox is no
 * session's bound sandbox.
 */
export async function credentialNow(read: ContextReader, target: AbsoluteTarget, now: () => Date): Promise<CredentialNow | null> {
  let context = await read(false);
  if (context === null) return null;
  let credential = credentialFor(context.credentials, target);
  if (credential !== null && credentialExpired(credential, now())) {
    context = (await read(true)) ?? context;
    credential = credentialFor(context.credentials, target);
  }
  return { context, credential, expired: credential === null ? null : expiredCredentialDenial(credential, target, now()) };
}
