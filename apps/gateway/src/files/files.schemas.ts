import { z } from 'zod';
import { defineRoute } from '../http/route';
import { QueryArray, QueryInt, QueryString, idParam } from '../http/schemas';

const FileIdParams = z.object({ file_id: idParam('file_id', 'file') });

export const EXPIRES_IN_SECONDS = { min: 3600, max: 7_776_000 } as const;

export const FileRoutes = {
  upload: defineRoute({
    method: 'POST',
    path: '/v1/files',
    tag: 'files',
    summary: 'Upload a file (multipart/form-data: `file`, optional `expires_in_seconds`)',
    multipart: {
      type: 'object',
      required: ['file'],
      properties: {
        file: { type: 'string', format: 'binary' },
        expires_in_seconds: { type: 'integer', minimum: EXPIRES_IN_SECONDS.min, maximum: EXPIRES_IN_SECONDS.max },
      },
    },
  }),
  list: defineRoute({
    method: 'GET',
    path: '/v1/files',
    tag: 'files',
    summary: 'List files (`scope_id` = a session: its outputs)',
    query: z.object({
      limit: QueryInt(1, 1000).optional(),
      page: QueryString(2048).optional(),
      scope_id: idParam('scope_id', 'sesn').optional(),
      ids: QueryArray(idParam('ids', 'file')).optional(),
    }),
  }),
  get: defineRoute({ method: 'GET', path: '/v1/files/{file_id}', tag: 'files', summary: 'File metadata', params: FileIdParams }),
  download: defineRoute({ method: 'GET', path: '/v1/files/{file_id}/content', tag: 'files', summary: 'Download a file', params: FileIdParams, binary: '*' }),
  delete: defineRoute({ method: 'DELETE', path: '/v1/files/{file_id}', tag: 'files', summary: 'Delete a file', params: FileIdParams }),
} as const;
