import { Controller, Inject } from '@nestjs/common';
import { ApiRoute, type RouteInput } from '../http/route';
import { Input } from '../http/input.decorator';
import { EnvironmentRoutes as R } from './environments.schemas';
import { EnvironmentsService } from './environments.service';

@Controller()
export class EnvironmentsController {
  constructor(@Inject(EnvironmentsService) private readonly environments: EnvironmentsService) {}

  @ApiRoute(R.create)
  create(@Input() i: RouteInput<typeof R.create>) {
    return this.environments.create(i.owner, i.body);
  }

  @ApiRoute(R.list)
  list(@Input() i: RouteInput<typeof R.list>) {
    return this.environments.list(i.owner, i.query);
  }

  @ApiRoute(R.get)
  get(@Input() i: RouteInput<typeof R.get>) {
    return this.environments.get(i.owner, i.params.environment_id);
  }

  @ApiRoute(R.update)
  update(@Input() i: RouteInput<typeof R.update>) {
    return this.environments.update(i.owner, i.params.environment_id, i.body);
  }

  @ApiRoute(R.delete)
  delete(@Input() i: RouteInput<typeof R.delete>) {
    return this.environments.delete(i.owner, i.params.environment_id);
  }

  @ApiRoute(R.archive)
  archive(@Input() i: RouteInput<typeof R.archive>) {
    return this.environments.archive(i.owner, i.params.environment_id);
  }
}
