import type { LeaseLock } from '@berth/sandbox-lifecycle';

/**
 * One sandbox acquisition per session across every sandbox-manager sharing the store: a session's
 * sandbox request and its turn may reach two managers at once (two consumers, redeliveries). The
 * second waits for the first's lease, then finds the container the first started by its
 * deterministic name, so a session never gets two containers nor two workspaces. The lease is
 * renewed while the work runs (a clone may take minutes) and lapses by itself if its holder dies.
 */
export class AcquisitionLeases {
  constructor(private readonly lock: LeaseLock) {}

  run<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    return this.lock.run(`sandbox-acquire:${sessionId}`, work);
  }
}
