import { Controller, Inject } from '@nestjs/common';
import { ApiRoute, type RouteInput } from '../http/route';
import { Input } from '../http/input.decorator';
import { NatsCredentialRoutes as R } from './nats-credentials.schemas';
import { NatsCredentialsService } from './nats-credentials.service';

@Controller()
export class NatsCredentialsController {
  constructor(@Inject(NatsCredentialsService) private readonly credentials: NatsCredentialsService) {}

  @ApiRoute(R.create)
  create(@Input() i: RouteInput<typeof R.create>) {
    return this.credentials.create(i.owner, i.body.name ?? 'default');
  }

  @ApiRoute(R.list)
  list(@Input() i: RouteInput<typeof R.list>) {
    return this.credentials.list(i.owner);
  }

  @ApiRoute(R.revoke)
  revoke(@Input() i: RouteInput<typeof R.revoke>) {
    return this.credentials.revoke(i.owner, i.params.nats_credential_id);
  }
}
