import type { Request } from 'express';
import { BerthError, ErrorCodes } from '@berth/core';

const OWNER = Symbol('berth.owner');
type WithOwner = Request & { [OWNER]?: string };

export const setOwner = (req: Request, owner: string): void => {
  (req as WithOwner)[OWNER] = owner;
};

/** The authenticated owner; public routes have none and must not ask. */
export function ownerOf(req: Request): string {
  const owner = (req as WithOwner)[OWNER];
  if (!owner) throw new BerthError(ErrorCodes.UNAUTHENTICATED, 401, 'missing API key');
  return owner;
}
