import type { Clock } from '@berth/core';
import type { Leases } from '@berth/ports';

// Short, renewed every third of it: a manager killed (or restarted) mid-acquisition holds the
// session's sandbox back until its lease lapses — with 60 s the chaos suite's kill -9 of the
// manager left every session deaf for a minute.
const TTL_MS = 5_000;
const POLL_MS = 100;

/**
 * One sandbox acquisition per session across every sandbox-manager sharing the store: a session's
 * sandbox request and its turn may reach two managers at once (two consumers, redeliveries). The
 * second waits for the first's lease, then finds the container the first started by its
 * deterministic name, so a session never gets two containers nor two workspaces. The lease is
 * renewed while the work runs (a clone may take minutes) and lapses by itself if its holder dies.
 */
export class AcquisitionLeases {
  constructor(
    private readonly leases: Leases,
    private readonly holder: string,
    private readonly clock: Clock,
  ) {}

  async run<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const name = `sandbox-acquire:${sessionId}`;
    while ((await this.leases.acquire(name, this.holder, this.clock.now(), TTL_MS)) === null) await new Promise((r) => setTimeout(r, POLL_MS));
    const renewal = setInterval(() => void this.leases.acquire(name, this.holder, this.clock.now(), TTL_MS).catch(() => undefined), TTL_MS / 3);
    renewal.unref();
    try {
      return await work();
    } finally {
      clearInterval(renewal);
      await this.leases.release(name, this.holder);
    }
  }
}
