import { z } from 'zod';
import { defineRoute } from '../http/route';
import { idParam } from '../http/schemas';

export const NatsCredentialCreateBody = z.object({ name: z.string().min(1).max(256).optional() });

const CredentialIdParams = z.object({ nats_credential_id: idParam('nats_credential_id', 'ncred') });

export const NatsCredentialRoutes = {
  create: defineRoute({
    method: 'POST',
    path: '/v1/nats_credentials',
    tag: 'nats_credentials',
    summary: "Mint a read-only NATS credential for the caller's session events (shown once)",
    body: NatsCredentialCreateBody,
  }),
  list: defineRoute({ method: 'GET', path: '/v1/nats_credentials', tag: 'nats_credentials', summary: "List the caller's NATS credentials" }),
  revoke: defineRoute({
    method: 'DELETE',
    path: '/v1/nats_credentials/{nats_credential_id}',
    tag: 'nats_credentials',
    summary: 'Revoke a NATS credential: refused on its next connect, connected clients are disconnected',
    params: CredentialIdParams,
  }),
} as const;
