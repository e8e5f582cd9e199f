import { z } from 'zod';
import { WEBHOOK_DELIVERY_STATES, WebhookEndpointCreateParamsSchema, WebhookEndpointUpdateParamsSchema } from '@berth/contracts';
import { defineRoute } from '../http/route';
import { PageQueryShape, QueryOrder, idParam } from '../http/schemas';

const WebhookParams = z.object({ webhook_id: idParam('webhook_id', 'whk') });
const DeliveryParams = WebhookParams.extend({ delivery_id: idParam('delivery_id', 'whd') });
const ListQuery = z.object({ ...PageQueryShape, order: QueryOrder.optional() });

/** Berth's own API: the Managed Agents API registers webhook endpoints in its console only. */
export const WebhookRoutes = {
  create: defineRoute({ method: 'POST', path: '/v1/webhooks', tag: 'webhooks', summary: 'Create a webhook endpoint (answers its signing secret, once)', body: WebhookEndpointCreateParamsSchema }),
  list: defineRoute({ method: 'GET', path: '/v1/webhooks', tag: 'webhooks', summary: 'List webhook endpoints', query: ListQuery }),
  get: defineRoute({ method: 'GET', path: '/v1/webhooks/{webhook_id}', tag: 'webhooks', summary: 'Retrieve a webhook endpoint', params: WebhookParams }),
  update: defineRoute({ method: 'POST', path: '/v1/webhooks/{webhook_id}', tag: 'webhooks', summary: 'Update a webhook endpoint (only the fields sent)', params: WebhookParams, body: WebhookEndpointUpdateParamsSchema }),
  delete: defineRoute({ method: 'DELETE', path: '/v1/webhooks/{webhook_id}', tag: 'webhooks', summary: 'Delete a webhook endpoint and its delivery log', params: WebhookParams }),
  regenerateSecret: defineRoute({
    method: 'POST',
    path: '/v1/webhooks/{webhook_id}/regenerate_signing_secret',
    tag: 'webhooks',
    summary: 'Replace the signing secret (the old one stops at once; the new one is answered once)',
    params: WebhookParams,
  }),
  deliveries: defineRoute({
    method: 'GET',
    path: '/v1/webhooks/{webhook_id}/deliveries',
    tag: 'webhooks',
    summary: 'The delivery log of an endpoint, newest first',
    params: WebhookParams,
    query: ListQuery.extend({ state: z.enum(WEBHOOK_DELIVERY_STATES).optional() }),
  }),
  delivery: defineRoute({ method: 'GET', path: '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}', tag: 'webhooks', summary: 'Retrieve a delivery with its attempts', params: DeliveryParams }),
  redeliver: defineRoute({
    method: 'POST',
    path: '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver',
    tag: 'webhooks',
    summary: 'Deliver the event of a delivered or failed delivery again (a new delivery)',
    params: DeliveryParams,
  }),
} as const;
