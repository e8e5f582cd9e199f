import { CommandOutcomeSchema, Headers, Streams, Subjects, type CommandOutcome, type SessionCommand } from '@berth/contracts';
import { inboxPrefixOf, JetStreamPublisher, type PublishReceipt } from '@berth/nats';
import type { NatsServerHandle } from '@berth/testing';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { createInbox, type NatsConnection } from '@nats-io/nats-core';

/**
 * Publishes commands straight to SESSION_CMD, bypassing the gateway, with the message id the
 * test chooses: how the suite makes the broker deliver duplicates, reorders and poison.
 */
export class DirectCommands {
  private readonly inbox: string;
  private readonly outcomes = new Map<string, CommandOutcome[]>();

  private constructor(
    private readonly nc: NatsConnection,
    private readonly publisher: JetStreamPublisher,
  ) {
    this.inbox = createInbox(inboxPrefixOf(nc));
    nc.subscribe(this.inbox, {
      callback: (err, msg) => {
        if (err) return;
        const parsed = CommandOutcomeSchema.safeParse(msg.json());
        if (parsed.success) this.outcomes.set(parsed.data.command_id, [...(this.outcomes.get(parsed.data.command_id) ?? []), parsed.data]);
      },
    });
  }

  /** Connects as the test's all-powerful NATS user (it publishes where no service may). */
  static async connect(nats: Pick<NatsServerHandle, 'connect'>): Promise<DirectCommands> {
    const nc = await nats.connect('admin', 'chaos-direct');
    return new DirectCommands(nc, new JetStreamPublisher(jetstream(nc)));
  }

  /** Publishes `command` under `msgId`, asking the kernel to answer on this client's inbox. */
  publish(command: SessionCommand, msgId: string): Promise<PublishReceipt> {
    return this.publisher.publish(Subjects.command(command.meta.session_id, command.type), command, { msgId, headers: { [Headers.replyTo]: this.inbox } });
  }

  /** Publishes raw bytes on a session's command subject (a poison message). */
  publishRaw(subject: string, bytes: Uint8Array, msgId: string): Promise<PublishReceipt> {
    return this.publisher.publish(subject, bytes, { msgId });
  }

  /** Waits for the `n`-th outcome the kernel sent for a command id. */
  async outcome(commandId: string, n = 1, timeoutMs = 15_000): Promise<CommandOutcome | null> {
    const deadline = Date.now() + timeoutMs;
    while ((this.outcomes.get(commandId)?.length ?? 0) < n) {
      if (Date.now() > deadline) return null;
      await new Promise((r) => setTimeout(r, 25));
    }
    return (this.outcomes.get(commandId) as CommandOutcome[])[n - 1];
  }

  /** How many dead letters SESSION_DLQ holds for a subject filter. */
  async deadLetters(filter: string): Promise<number> {
    const jsm = await jetstreamManager(this.nc);
    const info = await jsm.streams.info(Streams.deadLetters, { subjects_filter: filter });
    return Object.values(info.state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
  }

  async close(): Promise<void> {
    await this.nc.drain();
  }
}
