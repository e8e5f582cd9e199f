import { parseSessionSubject, Streams, Subjects } from '@berth/contracts';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { OpenTurnDirectory } from '../reconciling/sandbox-manager.port';

/**
 * Every session that ever started a turn, from SESSION_EVT's own subject index: the stream info of
 * its `TurnStarted` subjects (one per session; paged by the client), with no consumer to create.
 * Which of those turns are still open is for the journal to say (the service folds each session's
 * journal). Events published before the owner token joined the subject are listed through their
 * own filter until retention drops them.
 */
export class JetStreamOpenTurnDirectory implements OpenTurnDirectory {
  constructor(private readonly nc: NatsConnection) {}

  async sessionsWithTurns(): Promise<readonly string[]> {
    const jsm = await jetstreamManager(this.nc);
    const sessions = new Set<string>();
    for (const filter of [Subjects.eventsOfType('TurnStarted'), Subjects.legacyEventsOfType('TurnStarted')]) {
      const info = await jsm.streams.info(Streams.events, { subjects_filter: filter });
      for (const subject of Object.keys(info.state.subjects ?? {})) {
        const parsed = parseSessionSubject(subject);
        if (parsed) sessions.add(parsed.sessionId);
      }
    }
    return [...sessions];
  }
}
