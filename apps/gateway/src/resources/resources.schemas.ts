import { z } from 'zod';
import { CheckoutSchema, MountPathSchema } from '@berth/contracts';
import { defineRoute } from '../http/route';
import { PageQueryShape, idParam } from '../http/schemas';

/** What a client sends to attach a resource (`BetaManagedAgents…ResourceParams`). */
export const ResourceParamsSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('file'), file_id: idParam('file_id', 'file'), mount_path: MountPathSchema.nullish() }),
    z.object({
      type: z.literal('github_repository'),
      // Checked by the resolver (repositoryUrlProblem), which answers 400 REPOSITORY_URL_NOT_SUPPORTED.
      url: z.string().max(4096),
      authorization_token: z.string().min(1).max(4096).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces').optional(),
      checkout: CheckoutSchema.nullish(),
      mount_path: MountPathSchema.nullish(),
    }),
    z.object({ type: z.literal('memory_store') }).refine(() => false, 'memory_store resources are not supported'),
  ])
  .describe('resource');
export type ResourceParams = z.infer<typeof ResourceParamsSchema>;

const ResourceIdParams = z.object({ session_id: idParam('session_id', 'sesn'), resource_id: idParam('resource_id', 'sesrsc') });
const SessionIdParams = z.object({ session_id: idParam('session_id', 'sesn') });

export const ResourceRoutes = {
  add: defineRoute({ method: 'POST', path: '/v1/sessions/{session_id}/resources', tag: 'resources', summary: 'Attach a file or repository to a session', params: SessionIdParams, body: ResourceParamsSchema }),
  list: defineRoute({ method: 'GET', path: '/v1/sessions/{session_id}/resources', tag: 'resources', summary: 'List the resources of a session', params: SessionIdParams, query: z.object(PageQueryShape) }),
  get: defineRoute({ method: 'GET', path: '/v1/sessions/{session_id}/resources/{resource_id}', tag: 'resources', summary: 'Retrieve a session resource', params: ResourceIdParams }),
  update: defineRoute({
    method: 'POST',
    path: '/v1/sessions/{session_id}/resources/{resource_id}',
    tag: 'resources',
    summary: "Rotate a repository resource's authorization token",
    params: ResourceIdParams,
    body: z.object({ authorization_token: z.string().min(1).max(4096).regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces') }),
  }),
  delete: defineRoute({ method: 'DELETE', path: '/v1/sessions/{session_id}/resources/{resource_id}', tag: 'resources', summary: 'Detach a session resource', params: ResourceIdParams }),
} as const;
