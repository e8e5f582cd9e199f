// The gateway must not import domain code, but its tests may: they need a real kernel to talk to.
/* eslint-disable @nx/enforce-module-boundaries */
import { isBerthError, type Clock } from '@berth/core';
import { EVENT_SCHEMA_VERSIONS, eventIdFor, type CommandOutcome, type RecordedEvent, type SessionCommand, type SessionEvent } from '@berth/contracts';
import type { SessionJournal, SessionReadModel } from '@berth/ports';
import { decide, deriveSessionView, evolve, initialState, type SessionState } from '@berth/session-domain';

/**
 * A small kernel for gateway tests until `@berth/session-kernel` lands: fold the journal, run the
 * domain's pure `decide`, append with the next seqs, project the read model. Commands run one at a
 * time, and a command id already in the journal returns its recorded events (redelivery).
 */
export class InProcessKernel {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly journal: SessionJournal,
    private readonly sessions: SessionReadModel,
    private readonly clock: Clock,
  ) {}

  execute(command: SessionCommand): Promise<CommandOutcome> {
    const run = this.queue.then(() => this.executeNow(command));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async executeNow(command: SessionCommand): Promise<CommandOutcome> {
    const { command_id, session_id } = command.meta;
    const done = (events: readonly RecordedEvent[], duplicate: boolean, last: number): CommandOutcome => ({
      ok: true,
      command_id,
      session_id,
      events: events.map((e) => ({ id: e.id, seq: e.seq, type: e.type })),
      duplicate,
      last_seq: last,
    });
    const previous = await this.journal.eventsOfCommand(session_id, command_id);
    if (previous.length > 0) return done(previous, true, await this.journal.lastSeq(session_id));

    const history = await this.journal.readEvents(session_id);
    const state = history.reduce<SessionState>((s, e) => evolve(s, e), initialState());
    let decided: readonly SessionEvent[];
    try {
      decided = decide(command, state);
    } catch (error) {
      if (!isBerthError(error)) throw error;
      return { ok: false, command_id, session_id, error: { code: error.code, status: error.status, message: error.message, details: { ...error.details } } };
    }
    const lastSeq = history.length ? history[history.length - 1].seq : 0;
    const at = this.clock.now().toISOString();
    const recorded = decided.map(
      (e, i) => ({ ...e, id: eventIdFor(command_id, i), session_id, seq: lastSeq + i + 1, schema_version: EVENT_SCHEMA_VERSIONS[e.type], command_id, occurred_at: at }) as RecordedEvent,
    );
    if (recorded.length === 0) return done([], false, lastSeq);
    await this.journal.appendEvents(session_id, recorded);
    const next = recorded.reduce<SessionState>((s, e) => evolve(s, e), state);
    const view = deriveSessionView(next);
    const created = next.created_at ?? at;
    await this.sessions.upsert({
      id: session_id,
      owner_id: next.owner_id,
      agent_id: next.agent.id,
      agent_version: next.agent.version,
      environment_id: next.environment_id,
      title: next.title,
      metadata: next.metadata,
      status: view.status,
      view: view as unknown as Record<string, unknown>,
      last_seq: lastSeq + recorded.length,
      created_at: created,
      updated_at: next.updated_at ?? created,
      archived_at: next.archived ? (next.archived_at ?? at) : null,
      deleted: next.lifecycle === 'DELETED',
    });
    return done(recorded, false, lastSeq + recorded.length);
  }
}
