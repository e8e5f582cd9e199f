import { pipeline } from 'node:stream/promises';
import { Controller, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiRoute, type RouteInput } from '../http/route';
import { Input } from '../http/input.decorator';
import { ExportRoutes as R } from './export.schemas';
import { SessionExport } from './session-export';

/** `GET /v1/sessions/{id}/export`: the session as one archive, streamed. */
@Controller()
export class ExportController {
  constructor(@Inject(SessionExport) private readonly sessionExport: SessionExport) {}

  @ApiRoute(R.export)
  async export(@Input() i: RouteInput<typeof R.export>, @Res() res: Response): Promise<void> {
    const { archive, cleanup } = await this.sessionExport.prepare(i.owner, i.params.session_id);
    try {
      res.status(200);
      res.setHeader('Content-Type', 'application/x-tar');
      res.setHeader('Content-Disposition', `attachment; filename="${i.params.session_id}.berth.tar"`);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      await pipeline(archive, res);
    } finally {
      await cleanup();
    }
  }
}
