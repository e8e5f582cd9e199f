import { ToolResultContentSchema } from '@berth/contracts';
import { z } from 'zod';
import { defineRoute } from '../http/route';
import { IdempotencyHeaders, QueryArray, QueryInt, QueryOrder, QueryString, QueryTime, idParam } from '../http/schemas';
import { UserMessageSchema } from '../sessions/sessions.schemas';

const SessionIdParams = z.object({ session_id: idParam('session_id', 'sesn') });
const EventTypeName = z.string().regex(/^[a-z_]+(\.[a-z_]+)+$/, 'must be an event type such as agent.message');

export const SendableEventSchema = z.discriminatedUnion('type', [
  UserMessageSchema,
  z.object({ type: z.literal('user.interrupt'), session_thread_id: z.string().max(128).nullish() }),
  z.object({
    type: z.literal('user.tool_confirmation'),
    tool_use_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be the id of an agent.tool_use event'),
    result: z.enum(['allow', 'deny']),
    deny_message: z.string().max(10_000).nullish(),
    session_thread_id: z.string().max(128).nullish(),
  }),
  z.object({
    type: z.literal('user.custom_tool_result'),
    custom_tool_use_id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be the id of an agent.custom_tool_use event'),
    content: ToolResultContentSchema.optional(),
    is_error: z.boolean().nullish(),
    session_thread_id: z.string().max(128).nullish(),
  }),
]);
export type SendableEvent = z.infer<typeof SendableEventSchema>;

export const EventRoutes = {
  list: defineRoute({
    method: 'GET',
    path: '/v1/sessions/{session_id}/events',
    tag: 'events',
    summary: 'List the events of a session',
    params: SessionIdParams,
    query: z.object({
      limit: QueryInt(1, 1000).optional(),
      page: QueryString(512).optional(),
      order: QueryOrder.optional(),
      types: QueryArray(EventTypeName).optional(),
      'created_at[gt]': QueryTime.optional(),
      'created_at[gte]': QueryTime.optional(),
      'created_at[lt]': QueryTime.optional(),
      'created_at[lte]': QueryTime.optional(),
    }),
  }),
  send: defineRoute({
    method: 'POST',
    path: '/v1/sessions/{session_id}/events',
    tag: 'events',
    summary: 'Send events (user.message, user.interrupt, user.tool_confirmation, user.custom_tool_result; `Idempotency-Key` supported)',
    params: SessionIdParams,
    body: z.object({ events: z.array(SendableEventSchema).min(1).max(50) }),
    headers: IdempotencyHeaders,
  }),
} as const;
