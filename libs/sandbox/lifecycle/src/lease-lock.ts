import type { Clock } from '@berth/core';
import type { LeaseRunner, Leases } from '@berth/ports';

// Short, renewed every third of it: a manager killed (or restarted) while holding one holds the
// others back only until it lapses — with 60 s the chaos suite's kill -9 of the manager left every
// session deaf for a minute.
const TTL_MS = 5_000;
const POLL_MS = 100;

/**
 * Work done by one holder at a time across every process sharing the store: the store lease
 * `name` is taken (waiting while another holder has it), renewed while the work runs, and released
 * at its end; a holder that dies holds nobody back longer than the lease's 5 s.
 */
export class LeaseLock implements LeaseRunner {
  constructor(
    private readonly leases: Leases,
    private readonly holder: string,
    private readonly clock: Clock,
  ) {}

  async run<T>(name: string, work: () => Promise<T>): Promise<T> {
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
