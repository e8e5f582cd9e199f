import { Controller, Inject, Res, type OnModuleDestroy } from '@nestjs/common';
import type { Response } from 'express';
import { DEPS } from '../app/tokens';
import type { GatewayDeps } from '../app/gateway-deps';
import { ApiRoute, type RouteInput } from '../http/route';
import { Input } from '../http/input.decorator';
import { SessionsService } from '../sessions/sessions.service';
import { runSessionStream } from './session-stream';
import { StreamRoutes as R } from './stream.schemas';

@Controller()
export class StreamController implements OnModuleDestroy {
  /** Open streams end on shutdown (else the HTTP server waits for them forever); clients resume with Last-Event-ID. */
  private readonly open = new Set<Response>();

  constructor(
    @Inject(SessionsService) private readonly sessions: SessionsService,
    @Inject(DEPS) private readonly deps: GatewayDeps,
  ) {}

  @ApiRoute(R.stream)
  async stream(@Input() i: RouteInput<typeof R.stream>, @Res() res: Response): Promise<void> {
    await this.sessions.find(i.owner, i.params.session_id);
    this.open.add(res);
    this.deps.metrics.sseClients.inc();
    res.on('close', () => {
      this.open.delete(res);
      this.deps.metrics.sseClients.dec();
    });
    await runSessionStream({
      sessionId: i.params.session_id,
      afterSeq: i.query.after ?? i.headers['last-event-id'] ?? null,
      journal: this.deps.store.journal,
      feed: this.deps.eventFeed,
      heartbeatMs: this.deps.options.heartbeatMs,
      sink: {
        open: () => {
          res.status(200);
          res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
          res.setHeader('Cache-Control', 'no-cache, no-transform');
          res.setHeader('Connection', 'keep-alive');
          res.setHeader('X-Accel-Buffering', 'no');
          res.flushHeaders();
          res.socket?.setNoDelay(true);
        },
        write: (chunk) => {
          if (!res.writableEnded) res.write(chunk);
        },
        end: () => res.end(),
        // The client may already be gone by the time the stream has subscribed.
        onClose: (listener) => (res.socket === null || res.socket.destroyed ? listener() : res.on('close', listener)),
      },
    });
  }

  onModuleDestroy(): void {
    for (const res of this.open) res.end();
  }
}
