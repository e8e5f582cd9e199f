import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { BerthError, ErrorCodes } from '@berth/core';
import type { ApiKeys } from '@berth/ports';
import type { Request } from 'express';
import { ROUTE_SPEC, type RouteSpec } from '../http/route';
import { parseApiKey, secretMatches } from './api-key';
import { setOwner } from './owner';
import { DEPS } from '../app/tokens';
import type { GatewayDeps } from '../app/gateway-deps';

const unauthenticated = (message: string) => new BerthError(ErrorCodes.UNAUTHENTICATED, 401, message);

/** `x-api-key: <key>` or `Authorization: Bearer <key>`; sets the request's owner. */
export function presentedKey(req: Request): string | null {
  const header = req.headers['x-api-key'];
  if (typeof header === 'string' && header.length > 0) return header.trim();
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (match) return match[1];
  }
  return null;
}

@Injectable()
export class ApiKeyGuard implements CanActivate {
  private readonly keys: ApiKeys;
  constructor(@Inject(DEPS) deps: GatewayDeps) {
    this.keys = deps.store.apiKeys;
  }

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const spec = Reflect.getMetadata(ROUTE_SPEC, ctx.getHandler()) as RouteSpec | undefined;
    if (spec?.public) return true;
    const req = ctx.switchToHttp().getRequest<Request>();
    const key = presentedKey(req);
    if (!key) throw unauthenticated('missing API key: send x-api-key or Authorization: Bearer');
    const parsed = parseApiKey(key);
    if (!parsed) throw unauthenticated('invalid API key');
    const record = await this.keys.byPrefix(parsed.prefix);
    if (!record || record.revoked_at !== null || !secretMatches(parsed.secret, record.hash)) throw unauthenticated('invalid API key');
    setOwner(req, record.owner_id);
    return true;
  }
}
