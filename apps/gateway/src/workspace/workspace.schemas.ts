import { z } from 'zod';
import { defineRoute } from '../http/route';
import { idParam } from '../http/schemas';

const SessionIdParams = z.object({ session_id: idParam('session_id', 'sesn') });
const WorkspacePath = z.string().max(4096).describe('a path relative to /workspace');
const PathQuery = z.object({ path: WorkspacePath.optional() });

export const WorkspaceRoutes = {
  archive: defineRoute({
    method: 'GET',
    path: '/v1/sessions/{session_id}/workspace',
    tag: 'workspace',
    summary: "Berth: the session's /workspace (or `path` in it) as a tar archive",
    params: SessionIdParams,
    query: PathQuery,
    binary: 'application/x-tar',
  }),
  entries: defineRoute({
    method: 'GET',
    path: '/v1/sessions/{session_id}/workspace/entries',
    tag: 'workspace',
    summary: 'Berth: the files and directories right below `path` in the workspace',
    params: SessionIdParams,
    query: PathQuery,
  }),
  file: defineRoute({
    method: 'GET',
    path: '/v1/sessions/{session_id}/workspace/file',
    tag: 'workspace',
    summary: 'Berth: one file of the workspace (`path` names it)',
    params: SessionIdParams,
    query: PathQuery,
    binary: '*',
  }),
} as const;
