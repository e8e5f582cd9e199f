import { jsonBytes, PayloadLimits, type AgentOutput } from '@berth/contracts';
import { OutputBatcher, type OutputBatch } from './output-batcher';

const message = (text: string): AgentOutput => ({ kind: 'message', content: [{ type: 'text', text }] });

async function waitFor(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 2_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('OutputBatcher', () => {
  const batcher = (lastRecordedOffset: number, sent: OutputBatch[], maxOutputs = 3) =>
    new OutputBatcher({ lastRecordedOffset, maxOutputs, send: async (b) => void sent.push(b), onError: (e) => { throw e; } });

  it('numbers outputs in file order, at most maxOutputs a batch', async () => {
    const sent: OutputBatch[] = [];
    const b = batcher(-1, sent);
    b.add(['a', 'b', 'c', 'd'].map(message));
    await b.flush();
    expect(sent.map((s) => [s.offset, s.outputs.length])).toEqual([
      [0, 3],
      [3, 1],
    ]);
    b.add([message('e')]);
    await b.flush();
    expect(sent.map((s) => s.offset)).toEqual([0, 3, 4]);
    expect(b.lastOffset).toBe(4);
  });

  it('sends an output at once when no batch is on its way: nothing waits for a flush or a timer', async () => {
    const sent: OutputBatch[] = [];
    const b = batcher(-1, sent, 50);
    b.add([message('a')]);
    // One turn of the event loop: no timer can have fired.
    await new Promise((r) => setImmediate(r));
    expect(sent).toEqual([{ offset: 0, outputs: [message('a')] }]);
  });

  it('gathers the outputs that come while a batch is on its way into the next one, sent when that one is answered', async () => {
    const sent: OutputBatch[] = [];
    let answer: () => void = () => undefined;
    const answered = new Promise<void>((r) => (answer = r));
    const b = new OutputBatcher({
      lastRecordedOffset: -1,
      maxOutputs: 50,
      send: async (batch) => {
        sent.push(batch);
        if (batch.offset === 0) await answered;
      },
      onError: (e) => {
        throw e;
      },
    });
    b.add([message('a')]);
    await waitFor(() => sent.length === 1);
    b.add([message('b')]);
    b.add([message('c')]);
    expect(sent).toHaveLength(1);
    answer();
    await b.flush();
    expect(sent).toEqual([
      { offset: 0, outputs: [message('a')] },
      { offset: 1, outputs: [message('b'), message('c')] },
    ]);
  });

  it('skips outputs the kernel already recorded (a reattach replays the file from the start)', async () => {
    const sent: OutputBatch[] = [];
    const b = batcher(1, sent, 10);
    b.add(['a', 'b', 'c'].map(message));
    await b.flush();
    expect(sent).toEqual([{ offset: 2, outputs: [message('c')] }]);
  });

  it('numbers a continued turn on after what the kernel recorded (a new harness, a new output file)', async () => {
    const sent: OutputBatch[] = [];
    const b = new OutputBatcher({ lastRecordedOffset: 4, firstOffset: 5, maxOutputs: 10, send: async (x) => void sent.push(x), onError: (e) => { throw e; } });
    b.add(['a', 'b'].map(message));
    await b.flush();
    expect(sent).toEqual([{ offset: 5, outputs: [message('a'), message('b')] }]);
  });

  it('sends batches one after another, in order', async () => {
    const order: number[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const b = new OutputBatcher({
      lastRecordedOffset: -1,
      maxOutputs: 1,
      send: async (batch) => {
        if (batch.offset === 0) await gate;
        order.push(batch.offset);
      },
      onError: (e) => {
        throw e;
      },
    });
    b.add([message('a')]);
    b.add([message('b')]);
    release();
    await b.flush();
    expect(order).toEqual([0, 1]);
  });

  it('starts a new batch before one would outgrow a command on the bus', async () => {
    const sent: OutputBatch[] = [];
    const b = batcher(-1, sent, 100);
    b.add(Array.from({ length: 7 }, (_, i) => message(`${i}`.repeat(200 * 1024))));
    await b.flush();
    expect(sent.map((s) => s.offset)).toEqual([0, 3, 6]);
    expect(sent.flatMap((s) => s.outputs)).toHaveLength(7);
    for (const batch of sent) expect(jsonBytes(batch.outputs)).toBeLessThan(PayloadLimits.commandBytes);
  });
});
