import type { SandboxRuntime, SandboxRuntimeEvent } from '@berth/ports';
import { sandboxOwner } from '@berth/sandbox-domain';
import type { WarmPool } from './warm-pool';

/** A session's sandbox is gone; the manager reports it to the kernel as `ReportSandboxDied`. */
export type SandboxDeath = Readonly<{
  sessionId: string;
  generation: number;
  /** The container name: the `sandbox_id` the session is bound to. */
  sandboxId: string;
  containerId: string;
  reason: 'exited' | 'oom_killed' | 'removed';
  exitCode: number | null;
  at: string;
}>;

const REASON: Record<Exclude<SandboxRuntimeEvent['kind'], 'start'>, SandboxDeath['reason']> = { die: 'exited', oom: 'oom_killed', destroy: 'removed' };
const REMEMBERED = 4096;

/**
 * Turns the runtime's event stream into one `SandboxDeath` per session container (an OOM kill
 * is followed by `die` and later `destroy`: only the first counts). Warm containers that die
 * leave the pool. Returns when `signal` aborts.
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
    if (reported.has(event.containerId)) continue;
    reported.add(event.containerId);
    if (reported.size > REMEMBERED) reported.delete(reported.values().next().value as string);
    try {
      await input.onDeath({
        sessionId: owner.sessionId,
        generation: owner.generation,
        sandboxId: event.name.replace(/^\//, ''),
        containerId: event.containerId,
        reason: REASON[event.kind],
        exitCode: event.exitCode,
        at: event.at,
      });
    } catch (error) {
      input.onError?.(error);
    }
  }
}
