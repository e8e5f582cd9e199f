import { PassThrough } from 'node:stream';
import { AsyncQueue, LineSplitter } from '@berth/core';
import { toRuntimeEvent, watchEvents } from './docker-events';

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

describe('event stream reconnect', () => {
  it('re-opens a dropped stream from the last event time and drops the replayed duplicates', async () => {
    const calls: Record<string, unknown>[] = [];
    const streams: PassThrough[] = [];
    const fakeDocker = {
      getEvents: async (options: Record<string, unknown>) => {
        calls.push(options);
        const stream = new PassThrough();
        streams.push(stream);
        return stream;
      },
    };
    const line = (id: string, action: string, time: number) =>
      JSON.stringify({ Type: 'container', Action: action, time, timeNano: time * 1e9, Actor: { ID: id, Attributes: { name: `n-${id}` } } }) + '\n';
    const abort = new AbortController();
    const seen: string[] = [];
    const consuming = (async () => {
      for await (const event of watchEvents(fakeDocker as never, ['berth.managed=true'], abort.signal)) {
        seen.push(`${event.containerId}:${event.kind}`);
        if (seen.length === 3) abort.abort();
      }
    })();
    const until = async (f: () => boolean) => {
      while (!f()) await new Promise((r) => setTimeout(r, 5));
    };
    await until(() => streams.length === 1);
    streams[0].write(line('a', 'start', 100));
    streams[0].write(line('a', 'die', 101));
    await until(() => seen.length === 2);
    streams[0].end();
    await until(() => streams.length === 2);
    expect(calls[1]).toMatchObject({ since: 101, filters: { label: ['berth.managed=true'] } });
    streams[1].write(line('a', 'die', 101));
    streams[1].write(line('a', 'destroy', 102));
    await consuming;
    expect(seen).toEqual(['a:start', 'a:die', 'a:destroy']);
  });
});
