/**
 * One command (and its publish) at a time per session inside this process, so events leave in seq
 * order and local commands never race each other; sessions still run in parallel. Another kernel
 * process is fenced by the journal's unique (session, seq) key instead.
 */
export class SessionLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(sessionId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(sessionId) ?? Promise.resolve();
    const current = previous.then(work, work);
    const tail = current.catch(() => undefined);
    this.tails.set(sessionId, tail);
    try {
      return await current;
    } finally {
      if (this.tails.get(sessionId) === tail) this.tails.delete(sessionId);
    }
  }
}
