import { publicTypesToDomain, toPublicEvent, type EventType, type RecordedEvent } from '@berth/contracts';
import type { SessionJournal } from '@berth/ports';
import type { SessionUseCases } from '@berth/session-use-cases';
import type { RouteInput } from '../http/route';
import { decodeEventCursor, encodeEventCursor } from './event-cursor';
import type { EventRoutes, SendableEvent } from './events.schemas';

const DEFAULT_LIMIT = 50;
const FILTERED_BATCH = 500;

export class EventsService {
  constructor(
    private readonly journal: SessionJournal,
    private readonly useCases: SessionUseCases,
  ) {}

  async list(owner: string, sessionId: string, q: RouteInput<typeof EventRoutes.list>['query']) {
    await this.useCases.find(owner, sessionId);
    const order = q.order ?? 'asc';
    const limit = q.limit ?? DEFAULT_LIMIT;
    let position = q.page ? decodeEventCursor(q.page, order).seq : undefined;
    const types = q.types ? [...new Set(q.types.flatMap(publicTypesToDomain))] : undefined;
    if (types && types.length === 0) return { data: [], next_page: null };

    const bounds = { gt: q['created_at[gt]'], gte: q['created_at[gte]'], lt: q['created_at[lt]'], lte: q['created_at[lte]'] };
    const timeFiltered = Object.values(bounds).some((v) => v !== undefined);
    const inWindow = (e: RecordedEvent) => {
      const t = Date.parse(e.occurred_at);
      return (
        (!bounds.gt || t > Date.parse(bounds.gt)) &&
        (!bounds.gte || t >= Date.parse(bounds.gte)) &&
        (!bounds.lt || t < Date.parse(bounds.lt)) &&
        (!bounds.lte || t <= Date.parse(bounds.lte))
      );
    };

    // Read one past the limit to know whether there is a next page; time filters read in batches.
    const batchSize = timeFiltered ? FILTERED_BATCH : limit + 1;
    const found: RecordedEvent[] = [];
    for (;;) {
      const batch = await this.journal.readEvents(sessionId, {
        order,
        limit: batchSize,
        types: types as EventType[] | undefined,
        ...(order === 'asc' ? { afterSeq: position ?? 0 } : { beforeSeq: position ?? Number.MAX_SAFE_INTEGER }),
      });
      for (const event of batch) {
        position = event.seq;
        if (inWindow(event)) found.push(event);
        if (found.length > limit) break;
      }
      if (found.length > limit || batch.length < batchSize) break;
    }
    const page = found.slice(0, limit);
    const next_page = found.length > limit ? encodeEventCursor({ seq: page[page.length - 1].seq, order }) : null;
    return { data: page.map(toPublicEvent), next_page };
  }

  /** Each event becomes one command (see SessionUseCases.sendEvents); the answer echoes them as recorded. */
  async send(owner: string, sessionId: string, events: readonly SendableEvent[], idempotencyKey: string | undefined) {
    return { data: await this.useCases.sendEvents(owner, sessionId, events, idempotencyKey) };
  }
}
