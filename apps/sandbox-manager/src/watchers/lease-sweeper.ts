import type { Clock } from '@berth/core';
import type { Logger, SandboxRuntime, SessionJournal } from '@berth/ports';
import { planStartup, SandboxLabels, type SandboxBinding } from '@berth/sandbox-domain';
import { sweepExpiredLeases, type BoundSandbox, type SandboxBindings } from '@berth/sandbox-lifecycle';
import { managerCommands, type SessionView } from '@berth/sandbox-workflow';
import type { BoundSandboxes } from '../sandboxes/bound-sandboxes';
import type { EnvironmentSettingsReader } from '../sandboxes/environment-settings';
import type { SandboxService } from '../sandboxes/sandbox-service';
import type { TurnExecutions } from '../turns/turn-executions';
import type { SendManagerCommand } from '../workflow/manager-sender';

/**
 * Periodically reports sandboxes whose lease ran out (idle past the environment's timeout, or past
 * their lifetime) as `ReportSandboxExpired`, then stops them. A sandbox running a turn is busy,
 * not idle, and is left alone. Other managers may run the session's turns (they share the
 * consumers), so before a lease is called expired the journal is asked too: a turn open there is
 * busy, and the session's last event counts as activity.
 *
 * It sweeps more than what this manager bound: every so often it takes over the bound, running
 * sandboxes nobody here tracks (`adoptUntracked`), so a sandbox whose manager died is still
 * expired and released when it idles, without waiting for a manager to restart. Sandboxes another
 * live manager bound are then swept by both, which is harmless: the kernel records one
 * `SandboxLost` at most (ReportSandboxExpired is fenced by sandbox id and generation, and both send
 * it under one command id), and releasing a container twice is stopping and removing a missing one.
 */
export class LeaseSweeper {
  private timers: NodeJS.Timeout[] = [];
  private sweeping: Promise<unknown> = Promise.resolve();
  private adopting: Promise<unknown> = Promise.resolve();
  private adoptingNow = false;

  constructor(
    private readonly deps: Readonly<{
      bound: BoundSandboxes;
      turns: Pick<TurnExecutions, 'get'>;
      sandboxes: SandboxService;
      send: SendManagerCommand;
      journal: Pick<SessionJournal, 'readEvents'>;
      view: (sessionId: string) => Promise<SessionView>;
      /** What the journal binds (the sessions with a container in this scope), for `adoptUntracked`. */
      bindings: SandboxBindings;
      runtime: Pick<SandboxRuntime, 'list'>;
      settings: Pick<EnvironmentSettingsReader, 'read'>;
      scopeLabels: Readonly<Record<string, string>>;
      clock: Clock;
      log: Logger;
    }>,
  ) {}

  /** Sweeps every `sweepEveryMs`; takes over untracked sandboxes every `adoptEveryMs` (a slower beat: it lists the engine and reads each session). */
  start(sweepEveryMs: number, adoptEveryMs: number): void {
    if (this.timers.length > 0) return;
    this.timers = [
      setInterval(() => {
        this.sweeping = this.sweep();
      }, sweepEveryMs),
      setInterval(() => {
        // One look at a time: with many sessions one may outlast the interval.
        if (this.adoptingNow) return;
        this.adoptingNow = true;
        this.adopting = this.adoptUntracked()
          .catch((error: unknown) => this.deps.log.warn('lease sweep: taking over untracked sandboxes failed', { err: error }))
          .finally(() => (this.adoptingNow = false));
      }, adoptEveryMs),
    ];
    for (const timer of this.timers) timer.unref();
  }

  async stop(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    await Promise.all([this.sweeping, this.adopting]);
  }

  /**
   * Takes into this manager's sweep the bound, running sandboxes of its scope it does not track
   * (by the rule a start-up reconcile adopts by): their manager died, or another manager bound
   * them. Returns how many.
   */
  async adoptUntracked(): Promise<number> {
    const live = await this.deps.runtime.list({ ...this.deps.scopeLabels, [SandboxLabels.managed]: 'true' });
    const { adopt } = planStartup({ live, bindings: await this.deps.bindings.listBound(), pools: [], now: this.deps.clock.now() });
    let adopted = 0;
    for (const { sandbox, sessionId, generation } of adopt) {
      const sandboxId = sandbox.name.replace(/^\//, '');
      if (this.deps.bound.find(sandboxId) !== null || this.deps.sandboxes.isReleasing(sandboxId)) continue;
      await this.adopt({ sessionId, generation, sandboxId });
      this.deps.log.info('lease sweep: tracking a sandbox bound by another manager (or by one that is gone)', { session_id: sessionId, sandbox_id: sandboxId });
      adopted += 1;
    }
    return adopted;
  }

  /**
   * Tracks a bound sandbox this manager did not bind. Its last activity is the session's last
   * journal event, the latest any manager recorded (now would give it a whole idle timeout more);
   * its lifetime counts from now, so it is never cut short.
   */
  async adopt(binding: SandboxBinding): Promise<void> {
    const view = await this.deps.view(binding.sessionId);
    const idle = (await this.deps.settings.read(view.owner_id, view.environment_id)).sandbox.idle;
    const [last] = await this.deps.journal.readEvents(binding.sessionId, { order: 'desc', limit: 1 });
    const now = this.deps.clock.now();
    // Bound here meanwhile: this manager's own record of it stands.
    if (this.deps.bound.find(binding.sandboxId) !== null) return;
    this.deps.bound.track({ ...binding, idle, startedAt: now, lastActivityAt: last === undefined ? now : new Date(last.occurred_at) });
  }

  sweep(): Promise<readonly BoundSandbox[]> {
    return sweepExpiredLeases({
      bindings: { listBound: () => this.idleHere() },
      clock: this.deps.clock,
      onExpired: (binding) => this.expire(binding),
      onError: (error, binding) => this.deps.log.error('lease expiry not reported', { sandbox_id: binding.sandboxId, err: error }),
    });
  }

  private async expire(binding: BoundSandbox): Promise<void> {
    await this.deps.send(managerCommands.sandboxExpired(binding.sessionId, { sandbox_id: binding.sandboxId, generation: binding.generation }));
    await this.deps.sandboxes.release(binding.sandboxId);
  }

  /**
   * The bound sandboxes no turn of this process runs in, each lease brought level with the journal
   * when it looks expired: a turn open there renews it now, the session's last event counts as
   * activity (another manager may have run its turns).
   */
  private async idleHere(): Promise<readonly BoundSandbox[]> {
    const now = this.deps.clock.now();
    const idle: BoundSandbox[] = [];
    for (const binding of await this.deps.bound.listBound()) {
      if (this.deps.turns.get(binding.sessionId) !== undefined) continue;
      if (binding.expiresAt === null || Date.parse(binding.expiresAt) > now.getTime()) {
        idle.push(binding);
        continue;
      }
      const view = await this.deps.view(binding.sessionId);
      const [last] = await this.deps.journal.readEvents(binding.sessionId, { order: 'desc', limit: 1 });
      if (view.turn !== null) this.deps.bound.touch(binding.sessionId, now);
      else if (last !== undefined) this.deps.bound.touch(binding.sessionId, new Date(last.occurred_at));
      idle.push(this.deps.bound.find(binding.sandboxId) ?? binding);
    }
    return idle;
  }
}
