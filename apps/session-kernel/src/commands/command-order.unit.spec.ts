import { recordingLogger } from '@berth/testing';
import { CommandOrder } from './command-order';

/** SESSION_CMD as the order sees it: the stream sequences still stored per session subject. */
function stream(pending: Record<string, number[]>) {
  const asked: string[] = [];
  return {
    asked,
    done: (session: string, seq: number) => (pending[session] = (pending[session] ?? []).filter((s) => s !== seq)),
    oldest: async (subject: string) => {
      asked.push(subject);
      const session = subject.split('.')[1] as string;
      return (pending[session] ?? []).length > 0 ? Math.min(...(pending[session] as number[])) : null;
    },
  };
}

describe('CommandOrder (one session\'s commands in stream order across kernel replicas)', () => {
  it('applies a command at once when no older one of its session is pending, whatever other sessions hold', async () => {
    const s = stream({ sesn_a: [7], sesn_b: [3] });
    const order = new CommandOrder({ oldest: s.oldest, maxWaitMs: 1_000, workingEveryMs: 1_000, log: recordingLogger().log });
    await order.awaitTurn('sesn_a', 7, () => undefined);
    expect(s.asked).toEqual(['session.sesn_a.cmd.>']);
  });

  it('holds a later command until the older one is done (acked on another replica), extending its ack deadline meanwhile', async () => {
    const s = stream({ sesn_a: [4, 9] });
    const order = new CommandOrder({ oldest: s.oldest, maxWaitMs: 10_000, workingEveryMs: 20, log: recordingLogger().log });
    let applied = false;
    let extended = 0;
    const waiting = order.awaitTurn('sesn_a', 9, () => extended++).then(() => (applied = true));
    await new Promise((r) => setTimeout(r, 150));
    expect(applied).toBe(false);
    expect(extended).toBeGreaterThan(0);
    s.done('sesn_a', 4);
    await waiting;
    expect(applied).toBe(true);
  });

  it('goes ahead after its bound when the older command stays pending (waiting out a retry), and says so', async () => {
    const s = stream({ sesn_a: [4, 9] });
    const logged = recordingLogger();
    const order = new CommandOrder({ oldest: s.oldest, maxWaitMs: 50, workingEveryMs: 1_000, log: logged.log });
    const started = Date.now();
    await order.awaitTurn('sesn_a', 9, () => undefined);
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(JSON.stringify(logged.lines)).toContain('an older command of the session is still pending');
  });
});
