import { z } from 'zod';
import type { RouteSpec } from '../http/route';

const jsonSchema = (schema: z.ZodType): Record<string, unknown> => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

const objectProperties = (schema: z.ZodType): [string, Record<string, unknown>, boolean][] => {
  const json = jsonSchema(schema) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, s]) => [name, s, (json.required ?? []).includes(name)]);
};

const ErrorSchema = {
  type: 'object',
  required: ['type', 'error'],
  properties: {
    type: { const: 'error' },
    error: {
      type: 'object',
      required: ['type', 'message', 'code'],
      properties: { type: { type: 'string' }, message: { type: 'string' }, code: { type: 'string' }, details: { type: 'object' } },
    },
  },
};

/** OpenAPI 3.1 from the same zod schemas that validate the requests. */
export function openApiDocument(routes: readonly RouteSpec[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const parameters = [
      ...(route.params ? objectProperties(route.params).map(([name, schema]) => ({ name, in: 'path', required: true, schema })) : []),
      ...(route.query ? objectProperties(route.query).map(([name, schema, required]) => ({ name, in: 'query', required, schema })) : []),
      ...(route.headers ? objectProperties(route.headers).map(([name, schema, required]) => ({ name, in: 'header', required, schema })) : []),
    ];
    const ok = route.stream
      ? { description: 'Server-sent events', content: { 'text/event-stream': { schema: { type: 'string' } } } }
      : route.binary
        ? { description: 'Content', content: { [route.binary === '*' ? 'application/octet-stream' : route.binary]: { schema: { type: 'string', format: 'binary' } } } }
        : { description: 'OK', content: { 'application/json': { schema: { type: 'object' } } } };
    paths[route.path] = {
      ...paths[route.path],
      [route.method.toLowerCase()]: {
        summary: route.summary,
        tags: [route.tag],
        ...(parameters.length ? { parameters } : {}),
        ...(route.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(route.body) } } } } : {}),
        ...(route.multipart ? { requestBody: { required: true, content: { 'multipart/form-data': { schema: route.multipart } } } } : {}),
        ...(route.upload ? { requestBody: { required: true, content: { [route.upload]: { schema: { type: 'string', format: 'binary' } } } } } : {}),
        ...(route.public ? { security: [] } : {}),
        responses: { '200': ok, default: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Berth API (Claude Managed Agents compatible)', version },
    security: [{ apiKey: [] }, { bearer: [] }],
    components: {
      securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' }, bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: ErrorSchema },
    },
    paths,
  };
}
