import { publicTypesToDomain, toPublicEvent, type EventType, type RecordedEvent } from '@berth/contracts';
import type { Clock, IdGenerator } from '@berth/core';
import type { SessionJournal } from '@berth/ports';
import type { RouteInput } from '../http/route';
import type { SessionCommands, AcceptedOutcome } from '../sessions/session-commands';
import type { SessionsService } from '../sessions/sessions.service';
import { decodeEventCursor, encodeEventCursor } from './event-cursor';
import type { EventRoutes, SendableEvent } from './events.schemas';

const DEFAULT_LIMIT = 50;
const FILTERED_BATCH = 500;

export class EventsService {
  constructor(
    private readonly journal: SessionJournal,
    private readonly sessions: SessionsService,
    private readonly commands: SessionCommands,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async list(owner: string, sessionId: string, q: RouteInput<typeof EventRoutes.list>['query']) {
    await this.sessions.find(owner, sessionId);
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

  /** Each event becomes one command; the answer echoes the events as the journal recorded them. */
  async send(owner: string, sessionId: string, events: readonly SendableEvent[]) {
    await this.sessions.find(owner, sessionId);
    const data: Record<string, unknown>[] = [];
    for (const event of events) {
      const outcome = await this.sendOne(owner, sessionId, event);
      data.push(await this.echo(sessionId, event, outcome));
    }
    return { data };
  }

  private sendOne(owner: string, sessionId: string, event: SendableEvent): Promise<AcceptedOutcome> {
    switch (event.type) {
      case 'user.message':
        return this.commands.send(owner, sessionId, 'SubmitUserMessage', { turn_id: this.ids.next('turn'), content: event.content });
      case 'user.interrupt':
        return this.commands.send(owner, sessionId, 'InterruptTurn', {});
      case 'user.tool_confirmation':
        return this.commands.send(owner, sessionId, 'ConfirmToolUse', { tool_use_id: event.tool_use_id, result: event.result, deny_message: event.deny_message ?? null });
    }
  }

  private async echo(sessionId: string, sent: SendableEvent, outcome: AcceptedOutcome): Promise<Record<string, unknown>> {
    const seqs = outcome.events.map((e) => e.seq);
    if (seqs.length > 0) {
      const recorded = await this.journal.readEvents(sessionId, { afterSeq: Math.min(...seqs) - 1, limit: seqs.length, order: 'asc' });
      const match = recorded.map(toPublicEvent).find((e) => e.type === sent.type);
      if (match) return match;
    }
    // Accepted without a new event of its own (a redelivery, or an interrupt with nothing running).
    return { ...sent, id: outcome.events[0]?.id ?? '', processed_at: this.clock.now().toISOString() };
  }
}
