import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { parseWith } from '@berth/contracts';
import type { Request } from 'express';
import { ROUTE_SPEC, type RouteSpec } from './route';
import { ownerOf } from '../auth/owner';

/** Parses the request with the route's own schemas; a mismatch is a 400 that names the field. */
export const Input = createParamDecorator((_: unknown, ctx: ExecutionContext) => {
  const spec = Reflect.getMetadata(ROUTE_SPEC, ctx.getHandler()) as RouteSpec;
  const req = ctx.switchToHttp().getRequest<Request>();
  return {
    owner: ownerOf(req),
    params: spec.params ? parseWith(spec.params, req.params) : undefined,
    query: spec.query ? parseWith(spec.query, req.query ?? {}) : undefined,
    body: spec.body ? parseWith(spec.body, req.body ?? {}) : undefined,
    headers: spec.headers ? parseWith(spec.headers, req.headers) : undefined,
  };
});
