import { SandboxManagerQueries, Subjects, TurnProbeRequestSchema } from '@berth/contracts';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import type { ManagerLog } from '../sessions/send-reliably';
import type { TurnProbe } from './turn-probe';

/** Answers `probe` queries over core NATS request/reply; a malformed request gets an error body, not silence. */
export class ProbeResponder {
  private subscription: Subscription | null = null;

  constructor(
    private readonly nc: NatsConnection,
    private readonly probe: TurnProbe,
    private readonly log: ManagerLog,
  ) {}

  start(): void {
    this.subscription ??= this.nc.subscribe(Subjects.query('sandbox-manager', SandboxManagerQueries.probe), {
      queue: 'sandbox-manager',
      callback: (error, msg) => {
        if (error) return;
        void (async () => {
          let body: unknown;
          try {
            const request = TurnProbeRequestSchema.parse(msg.json());
            body = await this.probe.probe(request);
          } catch (e) {
            this.log.warn(`probe request not answered with facts: ${e instanceof Error ? e.message : String(e)}`);
            body = { error: { type: 'invalid_request_error', message: e instanceof Error ? e.message : String(e) } };
          }
          msg.respond(JSON.stringify(body));
        })();
      },
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
    this.subscription = null;
  }
}
