import { z } from 'zod';
import { defineRoute } from '../http/route';
import { idParam } from '../http/schemas';

export const ExportRoutes = {
  export: defineRoute({
    method: 'GET',
    path: '/v1/sessions/{session_id}/export',
    tag: 'sessions',
    summary: 'Berth: the session as one tar archive (manifest, journal, harness transcripts, outputs, workspace; never a secret)',
    params: z.object({ session_id: idParam('session_id', 'sesn') }),
    binary: 'application/x-tar',
  }),
} as const;
