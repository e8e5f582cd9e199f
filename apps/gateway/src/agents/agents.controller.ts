import { Controller, Inject } from '@nestjs/common';
import { ApiRoute, type RouteInput } from '../http/route';
import { Input } from '../http/input.decorator';
import { AgentRoutes as R } from './agents.schemas';
import { AgentsService } from './agents.service';

@Controller()
export class AgentsController {
  constructor(@Inject(AgentsService) private readonly agents: AgentsService) {}

  @ApiRoute(R.create)
  create(@Input() i: RouteInput<typeof R.create>) {
    return this.agents.create(i.owner, i.body);
  }

  @ApiRoute(R.list)
  list(@Input() i: RouteInput<typeof R.list>) {
    return this.agents.list(i.owner, i.query);
  }

  @ApiRoute(R.get)
  get(@Input() i: RouteInput<typeof R.get>) {
    return this.agents.get(i.owner, i.params.agent_id, i.query.version);
  }

  @ApiRoute(R.update)
  update(@Input() i: RouteInput<typeof R.update>) {
    return this.agents.update(i.owner, i.params.agent_id, i.body);
  }

  @ApiRoute(R.archive)
  archive(@Input() i: RouteInput<typeof R.archive>) {
    return this.agents.archive(i.owner, i.params.agent_id);
  }

  @ApiRoute(R.versions)
  versions(@Input() i: RouteInput<typeof R.versions>) {
    return this.agents.versions(i.owner, i.params.agent_id, i.query);
  }
}
