import {
  SandboxManagerQueries,
  SandboxStateRequestSchema,
  Subjects,
  TranscriptRestoreRequestSchema,
  TurnOutputRecoveryRequestSchema,
  TurnProbeRequestSchema,
  TurnReattachRequestSchema,
  type SandboxManagerQuery,
} from '@berth/contracts';
import type { Logger } from '@berth/ports';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import type { TurnProbe } from './turn-probe';
import type { TurnQueries } from './turn-queries';

/**
 * Answers the sandbox-manager's request/reply queries over core NATS (the session's sandbox state,
 * turn probe, reattach, output recovery, transcript check). A malformed request gets an error body rather than silence.
 */
export class ProbeResponder {
  private readonly subscriptions: Subscription[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly probe: TurnProbe,
    private readonly queries: TurnQueries,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.subscriptions.length > 0) return;
    this.answer(SandboxManagerQueries.sandbox, (body) => this.probe.sandbox(SandboxStateRequestSchema.parse(body)));
    this.answer(SandboxManagerQueries.probe, (body) => this.probe.probe(TurnProbeRequestSchema.parse(body)));
    this.answer(SandboxManagerQueries.reattachTurn, (body) => this.queries.reattach(TurnReattachRequestSchema.parse(body)));
    this.answer(SandboxManagerQueries.recoverTurnOutput, (body) => this.queries.recoverOutput(TurnOutputRecoveryRequestSchema.parse(body)));
    this.answer(SandboxManagerQueries.restoreTranscript, (body) => this.queries.restoreTranscript(TranscriptRestoreRequestSchema.parse(body)));
  }

  stop(): void {
    for (const s of this.subscriptions.splice(0)) s.unsubscribe();
  }

  private answer(query: SandboxManagerQuery, handle: (body: unknown) => Promise<unknown>): void {
    const subscription = this.nc.subscribe(Subjects.query('sandbox-manager', query), {
      queue: 'sandbox-manager',
      callback: (error, msg) => {
        if (error) return;
        void (async () => {
          let reply: unknown;
          try {
            reply = await handle(msg.json());
          } catch (e) {
            const message = e instanceof Error ? e.message : String(e);
            this.log.warn(`${query} query not answered with facts`, { reason: message });
            reply = { error: { type: 'invalid_request_error', message } };
          }
          msg.respond(JSON.stringify(reply));
        })();
      },
    });
    this.subscriptions.push(subscription);
  }
}
