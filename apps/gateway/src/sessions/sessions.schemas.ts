import { z } from 'zod';
import { ContentBlockSchema, MAX_SESSION_RESOURCES, MAX_SESSION_VAULTS } from '@berth/contracts';
import { defineRoute } from '../http/route';
import { ResourceParamsSchema } from '../resources/resources.schemas';
import { IdempotencyHeaders, MetadataPatchSchema, MetadataSchema, PageQueryShape, QueryArray, QueryBool, QueryInt, QueryOrder, QueryString, QueryTime, idParam } from '../http/schemas';

export const UserMessageSchema = z.object({ type: z.literal('user.message'), content: z.array(ContentBlockSchema).min(1).max(1000) });

const AgentRefSchema = z.union([
  idParam('agent', 'agent'),
  z.object({ type: z.literal('agent'), id: idParam('agent.id', 'agent'), version: z.number().int().positive().optional() }),
]);

export const SessionCreateBody = z.object({
  agent: AgentRefSchema,
  environment_id: idParam('environment_id', 'env'),
  title: z.string().max(512).nullish(),
  metadata: MetadataSchema.optional(),
  initial_events: z.array(UserMessageSchema).max(50).optional(),
  resources: z.array(ResourceParamsSchema).max(MAX_SESSION_RESOURCES).optional(),
  /** Vaults whose credentials the egress injects into the sandbox's requests; pinned for the session's life. */
  vault_ids: z.array(idParam('vault_ids', 'vlt')).max(MAX_SESSION_VAULTS).optional(),
});

export const SessionUpdateBody = z.object({
  title: z.string().max(512).nullish(),
  metadata: MetadataPatchSchema.nullish(),
  vault_ids: z.array(z.string()).max(0, 'vault_ids is reserved').optional(),
});

/** Which turn a fork continues from: its `user.message` event id or seq (at most one); neither: the latest completed turn. */
export const SessionForkBody = z
  .strictObject({
    event_id: z.string().min(1).max(256).optional(),
    seq: z.number().int().positive().optional(),
  })
  .refine((b) => b.event_id === undefined || b.seq === undefined, { message: 'name the turn by event_id or by seq, not both', path: ['seq'] });

const Statuses = z.enum(['rescheduling', 'running', 'idle', 'terminated']);
const SessionIdParams = z.object({ session_id: idParam('session_id', 'sesn') });

export const SessionRoutes = {
  create: defineRoute({ method: 'POST', path: '/v1/sessions', tag: 'sessions', summary: 'Create a session (`Idempotency-Key` supported)', body: SessionCreateBody, headers: IdempotencyHeaders }),
  list: defineRoute({
    method: 'GET',
    path: '/v1/sessions',
    tag: 'sessions',
    summary: 'List sessions',
    query: z.object({
      ...PageQueryShape,
      agent_id: QueryString(128).optional(),
      agent_version: QueryInt(1, 1_000_000).optional(),
      include_archived: QueryBool.optional(),
      order: QueryOrder.optional(),
      statuses: QueryArray(Statuses).optional(),
      'created_at[gt]': QueryTime.optional(),
      'created_at[gte]': QueryTime.optional(),
      'created_at[lt]': QueryTime.optional(),
      'created_at[lte]': QueryTime.optional(),
    }),
  }),
  get: defineRoute({ method: 'GET', path: '/v1/sessions/{session_id}', tag: 'sessions', summary: 'Retrieve a session', params: SessionIdParams }),
  update: defineRoute({ method: 'POST', path: '/v1/sessions/{session_id}', tag: 'sessions', summary: 'Update title and metadata', params: SessionIdParams, body: SessionUpdateBody }),
  delete: defineRoute({ method: 'DELETE', path: '/v1/sessions/{session_id}', tag: 'sessions', summary: 'Delete a session', params: SessionIdParams }),
  archive: defineRoute({ method: 'POST', path: '/v1/sessions/{session_id}/archive', tag: 'sessions', summary: 'Archive a session', params: SessionIdParams }),
  recover: defineRoute({
    method: 'POST',
    path: '/v1/sessions/{session_id}/recover',
    tag: 'sessions',
    summary: 'Berth: recover the session sandbox explicitly (`wait_ms`: answer once a new sandbox is ready, bounded)',
    params: SessionIdParams,
    query: z.object({ wait_ms: QueryInt(0, 180_000).optional() }),
  }),
  endConversation: defineRoute({
    method: 'POST',
    path: '/v1/sessions/{session_id}/end_conversation',
    tag: 'sessions',
    summary: 'Berth: end the harness conversation (the next message starts a fresh one)',
    params: SessionIdParams,
  }),
  terminate: defineRoute({ method: 'POST', path: '/v1/sessions/{session_id}/terminate', tag: 'sessions', summary: 'Berth: stop and release the session sandbox', params: SessionIdParams }),
  pause: defineRoute({
    method: 'POST',
    path: '/v1/sessions/{session_id}/pause',
    tag: 'sessions',
    summary: 'Berth: release the sandbox, keep workspace, transcript and conversation (idle sessions only)',
    params: SessionIdParams,
  }),
  fork: defineRoute({
    method: 'POST',
    path: '/v1/sessions/{session_id}/fork',
    tag: 'sessions',
    summary: "Berth: a new session whose conversation and workspace are this one's at the end of a turn (`event_id` or `seq` of its user.message; default: the latest completed turn)",
    params: SessionIdParams,
    body: SessionForkBody.optional(),
  }),
  resume: defineRoute({ method: 'POST', path: '/v1/sessions/{session_id}/resume', tag: 'sessions', summary: 'Berth: bring a paused session back in a new sandbox', params: SessionIdParams }),
} as const;
