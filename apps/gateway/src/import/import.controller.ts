import { Controller, Inject, Req } from '@nestjs/common';
import type { Request } from 'express';
import { ApiRoute, type RouteInput } from '../http/route';
import { Input } from '../http/input.decorator';
import { ImportRoutes as R } from './import.schemas';
import { SessionImport } from './session-import';

/** `POST /v1/sessions/import`: the archive is the request body, streamed. */
@Controller()
export class ImportController {
  constructor(@Inject(SessionImport) private readonly sessionImport: SessionImport) {}

  @ApiRoute(R.import)
  async import(@Input() i: RouteInput<typeof R.import>, @Req() req: Request) {
    try {
      const declared = Number(req.headers['content-length'] ?? NaN);
      return await this.sessionImport.import(i.owner, req, i.query, Number.isFinite(declared) ? declared : undefined, i.headers['idempotency-key']);
    } finally {
      // A refusal may come before the whole upload was read: the rest is read and dropped, so the client gets the answer, not a
      // reset, and the connection closes after it (a client that stops sending on the answer would otherwise hold it open).
      if (!req.readableEnded) {
        req.res?.setHeader('Connection', 'close');
        req.resume();
      }
    }
  }
}
