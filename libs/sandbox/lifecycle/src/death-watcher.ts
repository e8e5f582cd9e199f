import type { SandboxRuntime } from '@berth/ports';
import { sandboxOwner } from '@berth/sandbox-domain';
import type { WarmPool } from './warm-pool';

/** A session's sandbox is gone; the manager reports it to the kernel as `ReportSandboxDied`. */
export type SandboxDeath = Readonly<{
  sessionId: string;
  generation: number;
  /** The container name: the `sandbox_id` the session is bound to. */
  sandboxId: string;
  containerId: string;
  /** `host_lost`: the host it ran on stopped answering (see MultiHostRuntime). */
  reason: 'exited' | 'oom_killed' | 'removed' | 'host_lost';
  exitCode: number | null;
  at: string;
}>;

const REMEMBERED = 4096;

/**
 * Turns the runtime's event stream into one `SandboxDeath` per session container: the first
 * `die` (or a `destroy` without one, or its host lost). An `oom` event alone is not a death — the kernel may have
 * killed one process inside a container that lives on — it only names the reason of a `die`
 * that follows. Warm containers that die leave the pool. Returns when `signal` aborts.
 */
export async function watchSandboxDeaths(input: {
  runtime: SandboxRuntime;
  signal: AbortSignal;
  pool?: WarmPool;
  onDeath: (death: SandboxDeath) => Promise<void> | void;
  onError?: (error: unknown) => void;
  /** Only containers with these labels are this manager's (see WarmPoolDeps.scopeLabels). */
  scopeLabels?: Readonly<Record<string, string>>;
}): Promise<void> {
  const reported = new Set<string>();
  const oomed = new Set<string>();
  const remember = (set: Set<string>, id: string) => {
    set.add(id);
    if (set.size > REMEMBERED) set.delete(set.values().next().value as string);
  };
  const inScope = (labels: Readonly<Record<string, string>>) => Object.entries(input.scopeLabels ?? {}).every(([k, v]) => labels[k] === v);
  for await (const event of input.runtime.events(input.signal)) {
    if (event.kind === 'start' || !inScope(event.labels)) continue;
    const owner = sandboxOwner(event.name, event.labels);
    if (owner === null) continue;
    if (owner.kind === 'pool') {
      input.pool?.forget(event.containerId);
      input.pool?.refill(owner.environmentId);
      continue;
    }
    if (event.kind === 'oom') {
      remember(oomed, event.containerId);
      continue;
    }
    if (reported.has(event.containerId)) continue;
    remember(reported, event.containerId);
    const reason: SandboxDeath['reason'] =
      event.kind === 'lost' ? 'host_lost' : event.kind === 'destroy' ? 'removed' : oomed.has(event.containerId) ? 'oom_killed' : 'exited';
    try {
      await input.onDeath({
        sessionId: owner.sessionId,
        generation: owner.generation,
        sandboxId: event.name.replace(/^\//, ''),
        containerId: event.containerId,
        reason,
        exitCode: event.exitCode,
        at: event.at,
      });
    } catch (error) {
      input.onError?.(error);
    }
  }
}
