import { Controller, Inject } from '@nestjs/common';
import { ApiRoute, type RouteInput } from '../http/route';
import { Input } from '../http/input.decorator';
import { ResourceRoutes as R } from './resources.schemas';
import { ResourcesService } from './resources.service';

@Controller()
export class ResourcesController {
  constructor(@Inject(ResourcesService) private readonly resources: ResourcesService) {}

  @ApiRoute(R.add)
  add(@Input() i: RouteInput<typeof R.add>) {
    return this.resources.add(i.owner, i.params.session_id, i.body);
  }

  @ApiRoute(R.list)
  list(@Input() i: RouteInput<typeof R.list>) {
    return this.resources.list(i.owner, i.params.session_id, i.query);
  }

  @ApiRoute(R.get)
  get(@Input() i: RouteInput<typeof R.get>) {
    return this.resources.get(i.owner, i.params.session_id, i.params.resource_id);
  }

  @ApiRoute(R.update)
  update(@Input() i: RouteInput<typeof R.update>) {
    return this.resources.update(i.owner, i.params.session_id, i.params.resource_id, i.body.authorization_token);
  }

  @ApiRoute(R.delete)
  delete(@Input() i: RouteInput<typeof R.delete>) {
    return this.resources.delete(i.owner, i.params.session_id, i.params.resource_id);
  }
}
