import { BaseRpcContext } from '@nestjs/microservices';
import type { InboundMessage } from '@berth/nats';

/** What an `@Ctx()` parameter receives: the delivery (subject, headers, delivery count). */
export class JetStreamContext extends BaseRpcContext<[InboundMessage]> {
  get message(): InboundMessage {
    return this.getArgByIndex(0);
  }
}
