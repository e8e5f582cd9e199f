import { z } from 'zod';
import { defineRoute } from '../http/route';
import { QueryArray, idParam } from '../http/schemas';

const Cursor = z.string().regex(/^\d{1,15}$/, 'must be a non-negative integer (an event seq)').transform(Number);

export const StreamRoutes = {
  stream: defineRoute({
    method: 'GET',
    path: '/v1/sessions/{session_id}/events/stream',
    tag: 'events',
    summary: 'Stream session events (SSE). Berth: `Last-Event-ID` or `?after=<seq>` replays from the journal first',
    stream: true,
    params: z.object({ session_id: idParam('session_id', 'sesn') }),
    query: z.object({
      after: Cursor.optional(),
      // Accepted for compatibility; Berth sends no delta previews, only whole events.
      event_deltas: QueryArray(z.enum(['agent.message', 'agent.thinking'])).optional(),
    }),
    headers: z.object({ 'last-event-id': Cursor.optional() }),
  }),
} as const;
