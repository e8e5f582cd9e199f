import { SandboxProbeSchema, Subjects, type SandboxProbe as ProbeFacts } from '@berth/contracts';
import type { NatsConnection } from '@nats-io/nats-core';
import { NO_SANDBOX, type SandboxProbe } from './sandbox-probe.port';

/**
 * Asks the sandbox-manager (NATS request/reply) what it knows about a session's sandbox. When no
 * manager answers in time, or the answer is malformed, recovery proceeds as if no sandbox exists.
 */
export class NatsSandboxProbe implements SandboxProbe {
  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs = 1_000,
  ) {}

  async probe(sessionId: string): Promise<ProbeFacts> {
    try {
      const reply = await this.nc.request(Subjects.query('sandbox-manager', 'probe'), JSON.stringify({ session_id: sessionId }), { timeout: this.timeoutMs });
      const parsed = SandboxProbeSchema.safeParse(reply.json());
      return parsed.success ? parsed.data : NO_SANDBOX;
    } catch {
      return NO_SANDBOX;
    }
  }
}
