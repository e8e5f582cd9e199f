import { Controller, Inject } from '@nestjs/common';
import { Input } from '../http/input.decorator';
import { ApiRoute, type RouteInput } from '../http/route';
import { WebhookRoutes as R } from './webhooks.schemas';
import { WebhooksService } from './webhooks.service';

@Controller()
export class WebhooksController {
  constructor(@Inject(WebhooksService) private readonly webhooks: WebhooksService) {}

  @ApiRoute(R.create)
  create(@Input() i: RouteInput<typeof R.create>) {
    return this.webhooks.create(i.owner, i.body);
  }

  @ApiRoute(R.list)
  list(@Input() i: RouteInput<typeof R.list>) {
    return this.webhooks.list(i.owner, i.query);
  }

  @ApiRoute(R.get)
  get(@Input() i: RouteInput<typeof R.get>) {
    return this.webhooks.get(i.owner, i.params.webhook_id);
  }

  @ApiRoute(R.update)
  update(@Input() i: RouteInput<typeof R.update>) {
    return this.webhooks.update(i.owner, i.params.webhook_id, i.body);
  }

  @ApiRoute(R.delete)
  delete(@Input() i: RouteInput<typeof R.delete>) {
    return this.webhooks.delete(i.owner, i.params.webhook_id);
  }

  @ApiRoute(R.regenerateSecret)
  regenerateSecret(@Input() i: RouteInput<typeof R.regenerateSecret>) {
    return this.webhooks.regenerateSecret(i.owner, i.params.webhook_id);
  }

  @ApiRoute(R.deliveries)
  deliveries(@Input() i: RouteInput<typeof R.deliveries>) {
    return this.webhooks.deliveries(i.owner, i.params.webhook_id, i.query);
  }

  @ApiRoute(R.delivery)
  delivery(@Input() i: RouteInput<typeof R.delivery>) {
    return this.webhooks.delivery(i.owner, i.params.webhook_id, i.params.delivery_id);
  }

  @ApiRoute(R.redeliver)
  redeliver(@Input() i: RouteInput<typeof R.redeliver>) {
    return this.webhooks.redeliver(i.owner, i.params.webhook_id, i.params.delivery_id);
  }
}
