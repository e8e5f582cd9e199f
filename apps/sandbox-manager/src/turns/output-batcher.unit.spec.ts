import { jsonBytes, PayloadLimits, type AgentOutput } from '@berth/contracts';
import { OutputBatcher, type OutputBatch } from './output-batcher';

const message = (text: string): AgentOutput => ({ kind: 'message', content: [{ type: 'text', text }] });

describe('OutputBatcher', () => {
  const batcher = (lastRecordedOffset: number, sent: OutputBatch[], maxOutputs = 3) =>
    new OutputBatcher({ lastRecordedOffset, maxOutputs, delayMs: 10_000, send: async (b) => void sent.push(b), onError: (e) => { throw e; } });

  it('numbers outputs in file order and sends full batches at once, the rest on flush', async () => {
    const sent: OutputBatch[] = [];
    const b = batcher(-1, sent);
    b.add(['a', 'b', 'c', 'd'].map(message));
    await b.flush();
    expect(sent.map((s) => [s.offset, s.outputs.length])).toEqual([[0, 4]]);
    b.add([message('e')]);
    await b.flush();
    expect(sent.map((s) => s.offset)).toEqual([0, 4]);
    expect(b.lastOffset).toBe(4);
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
    const b = new OutputBatcher({ lastRecordedOffset: 4, firstOffset: 5, maxOutputs: 10, delayMs: 10_000, send: async (x) => void sent.push(x), onError: (e) => { throw e; } });
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
      delayMs: 10_000,
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
