import { createHash } from 'node:crypto';
import type { SessionCommand } from '@berth/contracts';
import type { EgressDenial } from '@berth/egress-domain';
import type { CommandBus, Logger } from '@berth/ports';
import type { SandboxContext } from '../context/sandbox-contexts';

export const EGRESS_ACTOR = 'egress';

/** Distinct refusals reported per turn (a sandbox probing thousands of hosts must not flood the journal). */
const PER_TURN = 32;
const REMEMBERED = 10_000;

/**
 * Tells the kernel about refusals, as `ReportEgressDenied` (→ `berth.egress_denied`): once per
 * (sandbox generation, turn, host, port, reason) — the command id is derived from those, so a
 * repeat is deduplicated by the broker and the kernel too — and at most `PER_TURN` per turn. The
 * sandbox already has its 403; reporting never delays it, and a broker that is away only costs
 * the event (logged).
 */
export class DenialReporter {
  private readonly seen = new Set<string>();
  private readonly perTurn = new Map<string, number>();

  constructor(
    private readonly deps: Readonly<{ bus: () => CommandBus | null; log: Logger; now?: () => Date }>,
  ) {}

  report(context: SandboxContext, denial: EgressDenial): void {
    const turn = `${context.sessionId}:g${context.generation}:${context.turnId ?? '-'}`;
    const key = `${turn}:${denial.host}:${denial.port}:${denial.reason}`;
    this.deps.log.warn('refused a destination', { session_id: context.sessionId, sandbox_id: context.sandboxName, host: denial.host, port: denial.port, reason: denial.reason });
    if (this.seen.has(key)) return;
    const count = this.perTurn.get(turn) ?? 0;
    if (count >= PER_TURN) return;
    this.remember(key, turn, count + 1);
    const bus = this.deps.bus();
    if (bus === null) return void this.deps.log.warn('not connected to NATS: a refusal is not recorded', { session_id: context.sessionId, host: denial.host });
    bus.dispatch(this.command(context, denial, key)).catch((error: unknown) => this.deps.log.warn('could not report a refusal', { session_id: context.sessionId, host: denial.host, err: error }));
  }

  private command(context: SandboxContext, denial: EgressDenial, key: string): SessionCommand {
    const id = createHash('sha256').update(key).digest('hex').slice(0, 40);
    return {
      type: 'ReportEgressDenied',
      data: { generation: context.generation, host: denial.host.slice(0, 255), port: denial.port, reason: denial.reason, setting: denial.setting, message: denial.message.slice(0, 2048) },
      meta: { command_id: `cmd_eg_${id}`, session_id: context.sessionId, actor: EGRESS_ACTOR, issued_at: (this.deps.now?.() ?? new Date()).toISOString() },
    };
  }

  private remember(key: string, turn: string, count: number): void {
    if (this.seen.size >= REMEMBERED) {
      this.seen.clear();
      this.perTurn.clear();
    }
    this.seen.add(key);
    this.perTurn.set(turn, count);
  }
}
