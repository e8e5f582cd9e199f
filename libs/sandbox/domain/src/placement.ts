/** One sandbox host as placement sees it: its limit, how many sandboxes it holds, and whether it answers. */
export type HostLoad = Readonly<{
  name: string;
  /** The most sandboxes (session and warm-pool containers) this host may hold. */
  maxSandboxes: number;
  /** Sandboxes it holds now, those being started on it included. */
  sandboxes: number;
  /** False while the host does not answer (it is never chosen then). */
  reachable: boolean;
}>;

/**
 * Whether a container takes one of its host's places: while it runs, and from its creation until
 * its first start. Placements across managers count containers as soon as they are created (the
 * start comes after the placement lock is released); one that ran and stopped takes none.
 */
export function holdsPlace(container: Readonly<{ running: boolean; startedAt: string | null }>): boolean {
  return container.running || container.startedAt === null;
}

export type Placement = Readonly<{ kind: 'placed'; host: string }> | Readonly<{ kind: 'full'; message: string }>;

/**
 * Where a new sandbox goes: the reachable host with the most free places (its limit less what it
 * holds); on a tie, the one listed first. None when every reachable host is at its limit, or none
 * answers; the message says which, for the session's `sandbox_start_failed`.
 */
export function placeSandbox(hosts: readonly HostLoad[]): Placement {
  let best: HostLoad | null = null;
  for (const host of hosts) {
    if (!host.reachable || host.sandboxes >= host.maxSandboxes) continue;
    if (best === null || host.maxSandboxes - host.sandboxes > best.maxSandboxes - best.sandboxes) best = host;
  }
  if (best !== null) return { kind: 'placed', host: best.name };
  const reachable = hosts.filter((h) => h.reachable);
  if (reachable.length === 0) return { kind: 'full', message: `no sandbox host answers (${hosts.map((h) => h.name).join(', ') || 'none configured'})` };
  const loads = reachable.map((h) => `${h.name} ${h.sandboxes}/${h.maxSandboxes}`).join(', ');
  const down = hosts.length - reachable.length;
  return { kind: 'full', message: `every sandbox host is at its limit (${loads})${down > 0 ? `; ${down} host(s) do not answer` : ''}` };
}

/** Where each of `count` new sandboxes goes, placed one after the other: each counts on its host for the next. */
export function placeSandboxes(hosts: readonly HostLoad[], count: number): Placement[] {
  let loads = hosts;
  const placements: Placement[] = [];
  for (let i = 0; i < count; i += 1) {
    const placement = placeSandbox(loads);
    placements.push(placement);
    if (placement.kind === 'placed') loads = loads.map((h) => (h.name === placement.host ? { ...h, sandboxes: h.sandboxes + 1 } : h));
  }
  return placements;
}
