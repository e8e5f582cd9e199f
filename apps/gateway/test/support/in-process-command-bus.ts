import type { CommandOutcome, RecordedEvent, SessionCommand } from '@berth/contracts';
import type { CommandBus, SessionJournal } from '@berth/ports';
import type { InMemoryEventFeed } from './in-memory-event-feed';

export type Kernel = Readonly<{ execute(command: SessionCommand): Promise<CommandOutcome> }>;

/** Hands commands straight to a kernel in this process and publishes what it appended (the outbox relay's job). */
export class InProcessCommandBus implements CommandBus {
  /** Commands seen, in order (tests assert "no second command"). */
  readonly sent: SessionCommand[] = [];
  /** Commands this matches are never answered (to exercise the gateway's timeout). */
  stallWhen: (command: SessionCommand) => boolean = () => false;
  /** Commands this matches are executed, but their outcome never reaches the caller (a reply lost on the way). */
  loseReplyWhen: (command: SessionCommand) => boolean = () => false;

  constructor(
    private readonly kernel: Kernel,
    private readonly journal: SessionJournal,
    private readonly feed: InMemoryEventFeed,
  ) {}

  async send(command: SessionCommand): Promise<CommandOutcome> {
    this.sent.push(command);
    if (this.stallWhen(command)) return new Promise<CommandOutcome>(() => undefined);
    const outcome = await this.kernel.execute(command);
    if (outcome.ok && outcome.events.length > 0) {
      const seqs = outcome.events.map((e) => e.seq);
      const appended: RecordedEvent[] = await this.journal.readEvents(command.meta.session_id, { afterSeq: Math.min(...seqs) - 1, limit: seqs.length });
      // Published after the reply, like the relay, so streams see a real race.
      setImmediate(() => this.feed.publish(appended));
    }
    if (this.loseReplyWhen(command)) return new Promise<CommandOutcome>(() => undefined);
    return outcome;
  }

  async dispatch(command: SessionCommand): Promise<void> {
    await this.send(command);
  }
}
