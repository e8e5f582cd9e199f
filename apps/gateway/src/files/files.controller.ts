import { pipeline } from 'node:stream/promises';
import { servedContentType } from '@berth/contracts';
import { Controller, Inject, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiRoute, type RouteInput } from '../http/route';
import { Input } from '../http/input.decorator';
import { FileRoutes as R } from './files.schemas';
import { FilesService } from './files.service';

@Controller()
export class FilesController {
  constructor(@Inject(FilesService) private readonly files: FilesService) {}

  @ApiRoute(R.upload)
  upload(@Input() i: RouteInput<typeof R.upload>, @Req() req: Request) {
    return this.files.upload(i.owner, req);
  }

  @ApiRoute(R.list)
  list(@Input() i: RouteInput<typeof R.list>) {
    return this.files.list(i.owner, i.query);
  }

  @ApiRoute(R.get)
  get(@Input() i: RouteInput<typeof R.get>) {
    return this.files.get(i.owner, i.params.file_id);
  }

  @ApiRoute(R.download)
  async download(@Input() i: RouteInput<typeof R.download>, @Res() res: Response): Promise<void> {
    const { file, bytes } = await this.files.content(i.owner, i.params.file_id);
    res.status(200);
    res.setHeader('Content-Type', servedContentType(file.mime_type));
    res.setHeader('Content-Length', String(file.size_bytes));
    res.setHeader('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.filename)}`);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    await pipeline(bytes, res);
  }

  @ApiRoute(R.delete)
  delete(@Input() i: RouteInput<typeof R.delete>) {
    return this.files.delete(i.owner, i.params.file_id);
  }
}
