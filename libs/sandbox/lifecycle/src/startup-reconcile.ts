import type { Clock } from '@berth/core';
import type { SandboxRuntime, SessionWorkspaces } from '@berth/ports';
import { orphanSpares, planStartup, SandboxLabels, sandboxOwner, type StartupPlan } from '@berth/sandbox-domain';
import type { SandboxBindings, SandboxRequests } from './sandbox-bindings';
import type { SandboxDeath } from './death-watcher';
import type { WarmPool } from './warm-pool';

/**
 * What a (re)starting sandbox-manager does before serving: list every managed container, adopt
 * the ones the store still binds and the fresh warm ones, leave alone the ones being bound (other
 * managers share the engine), report bound-but-dead ones (kept: a
 * stopped container's files can still be read for turn recovery; once the kernel clears the
 * binding the next reconcile reaps it), remove orphans and the spare workspaces no container
 * mounts any more (unless made in the last few minutes: another manager may be about to start a
 * warm container with it), then top the pools up.
 */
export async function reconcileAtStart(input: {
  runtime: SandboxRuntime;
  bindings: SandboxBindings;
  /** None by default: every unbound session container is then an orphan. */
  requests?: SandboxRequests;
  pool: WarmPool;
  workspaces: SessionWorkspaces;
  clock: Clock;
  onDead: (death: SandboxDeath) => Promise<void> | void;
  /** Only containers with these labels are this manager's (see WarmPoolDeps.scopeLabels). */
  scopeLabels?: Readonly<Record<string, string>>;
}): Promise<StartupPlan> {
  const live = await input.runtime.list({ ...input.scopeLabels, [SandboxLabels.managed]: 'true' });
  const [bound, requests] = await Promise.all([input.bindings.listBound(), input.requests?.listRequested() ?? []]);
  const plan = planStartup({ live, bindings: bound, requests, pools: input.pool.targets(), now: input.clock.now() });
  input.pool.adopt(plan.warm);
  for (const { sandbox, sessionId, generation } of plan.dead) {
    await input.onDead({
      sessionId,
      generation,
      sandboxId: sandbox.name.replace(/^\//, ''),
      containerId: sandbox.id,
      reason: 'exited',
      exitCode: null,
      at: input.clock.now().toISOString(),
    });
  }
  // A pool container goes only through its claim: another manager may be handing it out right now.
  const removed = await Promise.all(
    plan.reap.map(async ({ sandbox }) => {
      if (sandboxOwner(sandbox.name, sandbox.labels)?.kind === 'pool') return (await input.pool.discardFound(sandbox)) ? sandbox.id : null;
      await input.runtime.remove(sandbox.id);
      return sandbox.id;
    }),
  );
  const reaped = new Set(removed.filter((id) => id !== null));
  const mounted = new Set(live.filter((c) => !reaped.has(c.id)).map((c) => c.labels[SandboxLabels.workspace]).filter((id): id is string => id !== undefined));
  for (const spare of orphanSpares({ spares: await input.workspaces.spares(), mounted, now: input.clock.now() })) await input.workspaces.removeSpare(spare);
  input.pool.refill();
  return plan;
}
