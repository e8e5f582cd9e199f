import { posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { mimeTypeOf, servedContentType, type WorkspaceReadReply, type WorkspaceReadRequest } from '@berth/contracts';
import { BerthError, ErrorCodes, ValidationError } from '@berth/core';
import type { BlobStore } from '@berth/ports';
import { Controller, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import { DEPS } from '../app/tokens';
import type { GatewayDeps } from '../app/gateway-deps';
import { ApiRoute, type RouteInput } from '../http/route';
import { Input } from '../http/input.decorator';
import { SessionsService } from '../sessions/sessions.service';
import { WorkspaceRoutes as R } from './workspace.schemas';

/**
 * Berth's read-only view of a session's workspace. The sandbox-manager reads it (from the running
 * sandbox, or from the workspace itself when none runs) and stages archives and files in the blob
 * store; they are streamed from there and removed once sent.
 */
@Controller()
export class WorkspaceController {
  constructor(
    @Inject(SessionsService) private readonly sessions: SessionsService,
    @Inject(DEPS) private readonly deps: GatewayDeps,
  ) {}

  @ApiRoute(R.archive)
  async archive(@Input() i: RouteInput<typeof R.archive>, @Res() res: Response): Promise<void> {
    const staged = await this.staged(i.owner, { session_id: i.params.session_id, path: i.query.path ?? '', kind: 'archive' });
    const name = `${i.params.session_id}-workspace${i.query.path ? `-${posix.basename(i.query.path)}` : ''}.tar`;
    await this.send(res, staged, 'application/x-tar', name);
  }

  @ApiRoute(R.entries)
  async entries(@Input() i: RouteInput<typeof R.entries>) {
    const reply = await this.ask(i.owner, { session_id: i.params.session_id, path: i.query.path ?? '', kind: 'list' });
    if (reply.kind !== 'entries') throw unexpected();
    return { path: i.query.path ?? '', data: reply.entries, truncated: reply.truncated };
  }

  @ApiRoute(R.file)
  async file(@Input() i: RouteInput<typeof R.file>, @Res() res: Response): Promise<void> {
    const path = i.query.path ?? '';
    const staged = await this.staged(i.owner, { session_id: i.params.session_id, path, kind: 'file' });
    const name = posix.basename(path);
    await this.send(res, staged, servedContentType(mimeTypeOf(name, null)), name);
  }

  private async ask(owner: string, request: WorkspaceReadRequest): Promise<WorkspaceReadReply> {
    await this.sessions.find(owner, request.session_id);
    if (request.kind === 'file' && request.path.replace(/\/+/g, '') === '') throw new ValidationError('path must name a file in the workspace', 'path');
    const reply = await this.deps.workspace.read(request);
    if (reply.kind === 'refused') throw new BerthError(reply.code, reply.status, reply.message);
    return reply;
  }

  private async staged(owner: string, request: WorkspaceReadRequest): Promise<{ blobKey: string; size: number }> {
    const reply = await this.ask(owner, request);
    if (reply.kind !== 'staged') throw unexpected();
    return { blobKey: reply.blob_key, size: reply.size };
  }

  private async send(res: Response, staged: { blobKey: string; size: number }, contentType: string, filename: string): Promise<void> {
    const blobs: BlobStore = this.deps.store.blobs;
    try {
      const bytes = await blobs.get(staged.blobKey);
      if (bytes === null) throw new BerthError(ErrorCodes.UNAVAILABLE, 503, 'the staged workspace read is gone; retry');
      res.status(200);
      res.setHeader('Content-Type', contentType);
      res.setHeader('Content-Length', String(staged.size));
      res.setHeader('Content-Disposition', `attachment; filename*=UTF-8''${encodeURIComponent(filename)}`);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      await pipeline(bytes, res);
    } finally {
      await blobs.delete(staged.blobKey);
    }
  }
}

const unexpected = () => new BerthError(ErrorCodes.UNAVAILABLE, 503, 'the sandbox-manager answered the workspace read with something else');
