import { z } from 'zod';
import { EnvironmentCreateParamsSchema, EnvironmentUpdateParamsSchema } from '@berth/contracts';
import { defineRoute } from '../http/route';
import { PageQueryShape, QueryBool, idParam } from '../http/schemas';

const EnvIdParams = z.object({ environment_id: idParam('environment_id', 'env') });

/** Bodies are the environment contract's (`@berth/contracts`). */
export const EnvironmentRoutes = {
  create: defineRoute({ method: 'POST', path: '/v1/environments', tag: 'environments', summary: 'Create an environment', body: EnvironmentCreateParamsSchema }),
  list: defineRoute({ method: 'GET', path: '/v1/environments', tag: 'environments', summary: 'List environments', query: z.object({ ...PageQueryShape, include_archived: QueryBool.optional() }) }),
  get: defineRoute({ method: 'GET', path: '/v1/environments/{environment_id}', tag: 'environments', summary: 'Retrieve an environment', params: EnvIdParams }),
  update: defineRoute({ method: 'POST', path: '/v1/environments/{environment_id}', tag: 'environments', summary: 'Update an environment (applies to new sandboxes)', params: EnvIdParams, body: EnvironmentUpdateParamsSchema }),
  delete: defineRoute({ method: 'DELETE', path: '/v1/environments/{environment_id}', tag: 'environments', summary: 'Delete an environment', params: EnvIdParams }),
  archive: defineRoute({ method: 'POST', path: '/v1/environments/{environment_id}/archive', tag: 'environments', summary: 'Archive an environment', params: EnvIdParams }),
} as const;
