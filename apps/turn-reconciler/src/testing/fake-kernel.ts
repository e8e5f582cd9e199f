import { eventIdFor, EVENT_SCHEMA_VERSIONS, type CommandOutcome, type RecordedEvent, type SessionCommand } from '@berth/contracts';
import type { Clock } from '@berth/core';
import type { CommandBus, SessionJournal } from '@berth/ports';
import { sessionDecider } from '@berth/session-domain';

/**
 * The kernel's contract, small: the real session decider over a journal, commands
 * deduplicated by id, committed events handed to subscribers asynchronously (the bus). `losePublishes` commits
 * without publishing, like a kernel killed between commit and publish.
 */
export class FakeKernel implements CommandBus {
  private readonly processed = new Set<string>();
  private readonly subscribers: ((event: RecordedEvent) => Promise<void>)[] = [];
  /** Deliveries run after the command returns, in commit order, like a broker's (nobody waits for consumers). */
  private deliveries: Promise<void> = Promise.resolve();
  private pending = 0;
  readonly received: SessionCommand[] = [];
  /** Subscriber failures (a real consumer would nak and get the event again). */
  readonly deliveryErrors: string[] = [];
  losePublishes = false;

  constructor(
    private readonly journal: SessionJournal,
    private readonly clock: Clock,
  ) {}

  subscribe(subscriber: (event: RecordedEvent) => Promise<void>): void {
    this.subscribers.push(subscriber);
  }

  async dispatch(command: SessionCommand): Promise<void> {
    await this.send(command);
  }

  async send(command: SessionCommand): Promise<CommandOutcome> {
    this.received.push(command);
    const { session_id, command_id } = command.meta;
    const base = { command_id, session_id };
    if (this.processed.has(command_id)) return { ok: true, ...base, events: [], duplicate: true, last_seq: await this.journal.lastSeq(session_id) };
    const history = await this.journal.readEvents(session_id);
    const state = history.reduce(sessionDecider.evolve, sessionDecider.initialState());
    const decided = sessionDecider.decide(command, state);
    const last = history.length;
    const recorded = decided.map(
      (e, i) =>
        ({
          ...e,
          id: eventIdFor(command_id, i),
          session_id,
          seq: last + i + 1,
          schema_version: EVENT_SCHEMA_VERSIONS[e.type],
          command_id,
          occurred_at: this.clock.now().toISOString(),
        }) as RecordedEvent,
    );
    await this.journal.commit({ sessionId: session_id, events: recorded });
    this.processed.add(command_id);
    if (!this.losePublishes) for (const e of recorded) this.publish(e);
    return { ok: true, ...base, events: recorded.map((e) => ({ id: e.id, seq: e.seq, type: e.type })), duplicate: false, last_seq: last + recorded.length };
  }

  /** Resolves once every published event has been handled by every subscriber. */
  async delivered(): Promise<void> {
    while (this.pending > 0) await this.deliveries;
  }

  private publish(event: RecordedEvent): void {
    this.pending += 1;
    this.deliveries = this.deliveries
      .then(async () => {
        for (const s of this.subscribers) await s(event).catch((e: unknown) => this.deliveryErrors.push(String(e)));
      })
      .finally(() => (this.pending -= 1));
  }

  /** The terminal-ish commands the reconciler sent, as `Type(reason|method)` strings. */
  reconcilerCommands(): string[] {
    return this.received
      .filter((c) => c.meta.actor === 'turn-reconciler')
      .map((c) =>
        c.type === 'FailTurn' ? `FailTurn(${c.data.reason})` : c.type === 'RecoverTurn' ? `RecoverTurn(${c.data.method})` : c.type,
      );
  }
}
