import { z } from 'zod';
import { AgentCreateParamsSchema, AgentUpdateParamsSchema } from '@berth/contracts';
import { defineRoute } from '../http/route';
import { PageQueryShape, QueryBool, QueryInt, QueryTime, idParam } from '../http/schemas';

const AgentIdParams = z.object({ agent_id: idParam('agent_id', 'agent') });

/** Bodies are the agent contract's (`@berth/contracts`): the API accepts exactly what the config schema says. */
export const AgentRoutes = {
  create: defineRoute({ method: 'POST', path: '/v1/agents', tag: 'agents', summary: 'Create an agent (version 1)', body: AgentCreateParamsSchema }),
  list: defineRoute({
    method: 'GET',
    path: '/v1/agents',
    tag: 'agents',
    summary: 'List agents',
    query: z.object({ ...PageQueryShape, include_archived: QueryBool.optional(), 'created_at[gte]': QueryTime.optional(), 'created_at[lte]': QueryTime.optional() }),
  }),
  get: defineRoute({ method: 'GET', path: '/v1/agents/{agent_id}', tag: 'agents', summary: 'Retrieve an agent (latest or `?version=N`)', params: AgentIdParams, query: z.object({ version: QueryInt(1, 1_000_000).optional() }) }),
  update: defineRoute({ method: 'POST', path: '/v1/agents/{agent_id}', tag: 'agents', summary: 'Update an agent (creates a new version)', params: AgentIdParams, body: AgentUpdateParamsSchema }),
  archive: defineRoute({ method: 'POST', path: '/v1/agents/{agent_id}/archive', tag: 'agents', summary: 'Archive an agent', params: AgentIdParams }),
  versions: defineRoute({ method: 'GET', path: '/v1/agents/{agent_id}/versions', tag: 'agents', summary: 'List the versions of an agent', params: AgentIdParams, query: z.object(PageQueryShape) }),
} as const;
