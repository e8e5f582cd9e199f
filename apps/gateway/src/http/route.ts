import { Delete, Get, HttpCode, Post, SetMetadata, applyDecorators } from '@nestjs/common';
import type { z } from 'zod';

/**
 * One description per route: method, path (OpenAPI style), and the zod schemas its input is parsed
 * with. The same object drives Nest's routing, request validation, the OpenAPI document and the
 * route-table tests, so none of them can drift from the others.
 */
export type RouteSpec = Readonly<{
  method: 'GET' | 'POST' | 'DELETE';
  /** OpenAPI-style path, e.g. `/v1/agents/{agent_id}`. */
  path: string;
  summary: string;
  tag: string;
  params?: z.ZodObject;
  query?: z.ZodType;
  body?: z.ZodType;
  headers?: z.ZodObject;
  /** No API key needed (health, OpenAPI). */
  public?: boolean;
  /** Answers `text/event-stream`. */
  stream?: boolean;
  /** Takes a `multipart/form-data` body with this JSON schema (a file upload), streamed by the handler itself. */
  multipart?: Readonly<Record<string, unknown>>;
  /** Takes a raw body of this media type (an archive), streamed by the handler itself. */
  upload?: string;
  /** Answers raw bytes (a file's content, an archive) with this media type; `*` = the file's own. */
  binary?: string;
}>;

export const defineRoute = <R extends RouteSpec>(spec: R): R => spec;

export const ROUTE_SPEC = 'berth:route-spec';

const nestPath = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1');

/** Registers the handler with Nest and records its spec for validation and discovery. Every success is 200, as in the reference API. */
export function ApiRoute(spec: RouteSpec): MethodDecorator {
  const mapping = { GET: Get, POST: Post, DELETE: Delete }[spec.method];
  return applyDecorators(mapping(nestPath(spec.path)), HttpCode(200), SetMetadata(ROUTE_SPEC, spec));
}

type Infer<S> = S extends z.ZodType ? z.infer<S> : undefined;

/** What a handler receives: the caller and its parsed input. */
export type RouteInput<R extends RouteSpec> = Readonly<{
  owner: string;
  params: Infer<R['params']>;
  query: Infer<R['query']>;
  body: Infer<R['body']>;
  headers: Infer<R['headers']>;
}>;
