import { SandboxManagerQueries, SandboxStateReplySchema, Subjects, type SandboxProbe as ProbeFacts } from '@berth/contracts';
import type { Clock } from '@berth/core';
import type { NatsConnection } from '@nats-io/nats-core';
import { NO_SANDBOX, type ProbeTarget, type SandboxProbe } from '@berth/session-use-cases';

/**
 * Asks the sandbox-manager (the session-level `sandbox` request/reply query: no turn needed, no
 * exec into the container) whether the bound sandbox exists and runs. The lease expiry comes from
 * the binding the kernel recorded. No sandbox bound, no answer in time, a malformed answer or one
 * about another session or generation all mean "no usable sandbox", and recovery starts a new one.
 */
export class NatsSandboxProbe implements SandboxProbe {
  constructor(
    private readonly nc: NatsConnection,
    private readonly clock: Clock,
    private readonly timeoutMs = 1_000,
  ) {}

  async probe(target: ProbeTarget): Promise<ProbeFacts> {
    if (target.sandbox === null) return NO_SANDBOX;
    const { generation, expires_at } = target.sandbox;
    const expired = expires_at !== null && Date.parse(expires_at) <= this.clock.now().getTime();
    try {
      const request = { session_id: target.sessionId, generation };
      const reply = await this.nc.request(Subjects.query('sandbox-manager', SandboxManagerQueries.sandbox), JSON.stringify(request), { timeout: this.timeoutMs });
      const parsed = SandboxStateReplySchema.safeParse(reply.json());
      if (!parsed.success || parsed.data.session_id !== target.sessionId || parsed.data.generation !== generation) return { ...NO_SANDBOX, expired };
      const state = parsed.data.sandbox;
      return { exists: state !== 'missing', running: state === 'running', expiry_known: true, expired };
    } catch {
      return { ...NO_SANDBOX, expired };
    }
  }
}
