import { Controller, Inject } from '@nestjs/common';
import { ApiRoute, type RouteInput } from '../http/route';
import { Input } from '../http/input.decorator';
import { EventRoutes as R } from './events.schemas';
import { EventsService } from './events.service';

@Controller()
export class EventsController {
  constructor(@Inject(EventsService) private readonly events: EventsService) {}

  @ApiRoute(R.list)
  list(@Input() i: RouteInput<typeof R.list>) {
    return this.events.list(i.owner, i.params.session_id, i.query);
  }

  @ApiRoute(R.send)
  send(@Input() i: RouteInput<typeof R.send>) {
    return this.events.send(i.owner, i.params.session_id, i.body.events, i.headers['idempotency-key']);
  }
}
