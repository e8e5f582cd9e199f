import type { SandboxInfo } from '@berth/ports';
import { sandboxOwner } from '@berth/sandbox-domain';

/** Containers by state for the `berth_sandboxes` gauge: warm (a pool's, running), bound (a session's, running), exited. */
export function countSandboxStates(containers: readonly SandboxInfo[]): Record<'warm' | 'bound' | 'exited', number> {
  const counts = { warm: 0, bound: 0, exited: 0 };
  for (const c of containers) {
    const owner = sandboxOwner(c.name, c.labels);
    if (owner === null) continue;
    if (!c.running) counts.exited++;
    else if (owner.kind === 'pool') counts.warm++;
    else counts.bound++;
  }
  return counts;
}
