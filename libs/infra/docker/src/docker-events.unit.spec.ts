import { AsyncQueue, LineSplitter } from './async-queue';
import { toRuntimeEvent } from './docker-events';

describe('engine events', () => {
  it('maps a container die to a runtime event with its labels and exit code', () => {
    expect(
      toRuntimeEvent({
        Type: 'container',
        Action: 'die',
        timeNano: 1_767_225_600_123_456_789,
        Actor: { ID: 'abc', Attributes: { name: 'berth-s-sesn_1-g2', image: 'berth/base', exitCode: '137', 'berth.session': 'sesn_1', 'berth.managed': 'true' } },
      }),
    ).toEqual({
      kind: 'die',
      containerId: 'abc',
      name: 'berth-s-sesn_1-g2',
      labels: { 'berth.session': 'sesn_1', 'berth.managed': 'true' },
      exitCode: 137,
      at: '2026-01-01T00:00:00.123Z',
    });
  });

  it('ignores other actions and object types', () => {
    expect(toRuntimeEvent({ Type: 'container', Action: 'exec_start: sh', Actor: { ID: 'a' } })).toBeNull();
    expect(toRuntimeEvent({ Type: 'network', Action: 'destroy', Actor: { ID: 'a' } })).toBeNull();
  });
});

describe('line splitting and the async queue', () => {
  it('splits chunks on newlines across chunk borders and flushes a trailing partial line', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter((l) => lines.push(l));
    splitter.write('{"a":');
    splitter.write('1}\r\n{"b"');
    splitter.write(':2}\n\nlast');
    splitter.flush();
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '', 'last']);
  });

  it('delivers pushed items in order to a waiting consumer, then ends', async () => {
    const queue = new AsyncQueue<number>();
    const seen: number[] = [];
    const consuming = (async () => {
      for await (const n of queue) seen.push(n);
    })();
    queue.push(1);
    await Promise.resolve();
    queue.push(2);
    queue.push(3);
    queue.end();
    queue.push(4);
    await consuming;
    expect(seen).toEqual([1, 2, 3]);
  });

  it('rejects the consumer when the producer fails', async () => {
    const queue = new AsyncQueue<number>();
    const next = queue[Symbol.asyncIterator]().next();
    queue.fail(new Error('connection lost'));
    await expect(next).rejects.toThrow('connection lost');
  });
});
