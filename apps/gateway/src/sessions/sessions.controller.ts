import { Controller, Inject } from '@nestjs/common';
import { ApiRoute, type RouteInput } from '../http/route';
import { Input } from '../http/input.decorator';
import { SessionRoutes as R } from './sessions.schemas';
import { SessionsService } from './sessions.service';

@Controller()
export class SessionsController {
  constructor(@Inject(SessionsService) private readonly sessions: SessionsService) {}

  @ApiRoute(R.create)
  create(@Input() i: RouteInput<typeof R.create>) {
    return this.sessions.create(i.owner, i.body, i.headers['idempotency-key']);
  }

  @ApiRoute(R.list)
  list(@Input() i: RouteInput<typeof R.list>) {
    return this.sessions.list(i.owner, i.query);
  }

  @ApiRoute(R.get)
  get(@Input() i: RouteInput<typeof R.get>) {
    return this.sessions.get(i.owner, i.params.session_id);
  }

  @ApiRoute(R.update)
  update(@Input() i: RouteInput<typeof R.update>) {
    return this.sessions.update(i.owner, i.params.session_id, i.body);
  }

  @ApiRoute(R.delete)
  delete(@Input() i: RouteInput<typeof R.delete>) {
    return this.sessions.delete(i.owner, i.params.session_id);
  }

  @ApiRoute(R.archive)
  archive(@Input() i: RouteInput<typeof R.archive>) {
    return this.sessions.archive(i.owner, i.params.session_id);
  }

  @ApiRoute(R.recover)
  recover(@Input() i: RouteInput<typeof R.recover>) {
    return this.sessions.recover(i.owner, i.params.session_id, i.query.wait_ms);
  }

  @ApiRoute(R.endConversation)
  endConversation(@Input() i: RouteInput<typeof R.endConversation>) {
    return this.sessions.endConversation(i.owner, i.params.session_id);
  }

  @ApiRoute(R.pause)
  pause(@Input() i: RouteInput<typeof R.pause>) {
    return this.sessions.pause(i.owner, i.params.session_id);
  }

  @ApiRoute(R.resume)
  resume(@Input() i: RouteInput<typeof R.resume>) {
    return this.sessions.resume(i.owner, i.params.session_id);
  }

  @ApiRoute(R.fork)
  fork(@Input() i: RouteInput<typeof R.fork>) {
    return this.sessions.fork(i.owner, i.params.session_id, i.body ?? {});
  }

  @ApiRoute(R.terminate)
  terminate(@Input() i: RouteInput<typeof R.terminate>) {
    return this.sessions.terminate(i.owner, i.params.session_id);
  }
}
