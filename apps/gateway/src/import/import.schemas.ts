import { z } from 'zod';
import { defineRoute } from '../http/route';
import { IdempotencyHeaders, idParam } from '../http/schemas';

export const ImportRoutes = {
  import: defineRoute({
    method: 'POST',
    path: '/v1/sessions/import',
    tag: 'sessions',
    summary: 'Berth: recreate an exported session (the archive of GET /v1/sessions/{id}/export as the body) under the caller, with new ids (`Idempotency-Key` supported)',
    query: z.object({
      /** Run it on this agent of the caller's (its latest version) instead of recreating the archived agent version. */
      agent_id: idParam('agent_id', 'agent').optional(),
      /** Run it in this environment of the caller's (on the archive's harness) instead of recreating the archived one. */
      environment_id: idParam('environment_id', 'env').optional(),
    }),
    headers: IdempotencyHeaders,
    upload: 'application/x-tar',
  }),
} as const;
