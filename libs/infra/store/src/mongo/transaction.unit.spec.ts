import { MongoServerError, type ClientSession } from 'mongodb';
import { inTransaction } from './transaction';

const transient = () => new MongoServerError({ code: 112, errmsg: 'WriteConflict', errorLabels: ['TransientTransactionError'] });
const unknownCommit = (code = 91) => new MongoServerError({ code, errmsg: 'ShutdownInProgress', errorLabels: ['UnknownTransactionCommitResult'] });

/** A client session that records the calls and fails commits as scripted. */
function fakeClient(commitFailures: Error[] = []) {
  const calls: string[] = [];
  let active = false;
  const session = {
    startTransaction: () => {
      calls.push('start');
      active = true;
    },
    inTransaction: () => active,
    abortTransaction: async () => {
      calls.push('abort');
      active = false;
    },
    commitTransaction: async () => {
      calls.push('commit');
      const failure = commitFailures.shift();
      if (failure) throw failure;
      active = false;
    },
    endSession: async () => void calls.push('end'),
  } as unknown as ClientSession;
  return { calls, client: { startSession: () => session } };
}

const settings = (over: Partial<Parameters<typeof inTransaction>[2]> = {}) => ({ deadlineMs: 1_000, maxCommitTimeMS: 500, sleep: async () => undefined, ...over });

describe('inTransaction (the driver-documented retry loop, bounded)', () => {
  it('runs the work once and commits', async () => {
    const { calls, client } = fakeClient();
    await expect(inTransaction(client, async () => 'done', settings())).resolves.toBe('done');
    expect(calls).toEqual(['start', 'commit', 'end']);
  });

  it('runs the whole transaction again after a TransientTransactionError in the work', async () => {
    const { calls, client } = fakeClient();
    let runs = 0;
    const result = await inTransaction(
      client,
      async () => {
        if (++runs === 1) throw transient();
        return runs;
      },
      settings(),
    );
    expect(result).toBe(2);
    expect(calls).toEqual(['start', 'abort', 'start', 'commit', 'end']);
  });

  it('retries only the commit after an UnknownTransactionCommitResult, never the work', async () => {
    const { calls, client } = fakeClient([unknownCommit(), unknownCommit()]);
    let runs = 0;
    await inTransaction(client, async () => void runs++, settings());
    expect(runs).toBe(1);
    expect(calls).toEqual(['start', 'commit', 'commit', 'commit', 'end']);
  });

  it('does not retry a commit that hit its own maxCommitTimeMS (the outcome stays unknown for the caller)', async () => {
    const { calls, client } = fakeClient([unknownCommit(50)]);
    await expect(inTransaction(client, async () => undefined, settings())).rejects.toMatchObject({ code: 50 });
    expect(calls).toEqual(['start', 'commit', 'end']);
  });

  it('runs the transaction again when the commit reports a TransientTransactionError', async () => {
    const { calls, client } = fakeClient([transient()]);
    let runs = 0;
    await inTransaction(client, async () => void runs++, settings());
    expect(runs).toBe(2);
    expect(calls).toEqual(['start', 'commit', 'start', 'commit', 'end']);
  });

  it('aborts and rethrows any other failure at once, and ends the session', async () => {
    const { calls, client } = fakeClient();
    await expect(inTransaction(client, async () => Promise.reject(new Error('bad document')), settings())).rejects.toThrow('bad document');
    expect(calls).toEqual(['start', 'abort', 'end']);
  });

  it('retries our own retryable errors like transient ones', async () => {
    const { client } = fakeClient();
    class Again extends Error {}
    let runs = 0;
    await inTransaction(
      client,
      async () => {
        if (++runs < 3) throw new Again();
      },
      settings({ retryOn: (e) => e instanceof Again }),
    );
    expect(runs).toBe(3);
  });

  it('stops retrying at its deadline and surfaces the last error', async () => {
    const { client } = fakeClient();
    let clock = 0;
    let runs = 0;
    const failing = inTransaction(
      client,
      async () => {
        runs++;
        clock += 400;
        throw transient();
      },
      settings({ deadlineMs: 1_000, now: () => clock }),
    );
    await expect(failing).rejects.toMatchObject({ code: 112 });
    expect(runs).toBe(3);
  });
});
