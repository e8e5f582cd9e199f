import { ApiError, ConnectionError } from '../exit-codes';
import { JournalServer, makeEvents } from '../test-support/journal-server';
import { tailEvents, type PublicEvent } from './event-tail';

// A real HTTP server on loopback that drops the connection mid-stream; the tail must still
// deliver the journal exactly once, in order.

let server: JournalServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

const collect = () => {
  const seen: { seq: number; id: string }[] = [];
  return { seen, onEvent: (e: PublicEvent, seq: number) => void seen.push({ seq, id: e.id }) };
};

describe('tailEvents against a server that drops connections', () => {
  it('resumes with Last-Event-ID after each drop: no gaps, no duplicates', async () => {
    const events = makeEvents(30);
    server = await new JournalServer({ events, dropAfter: (n) => (n < 3 ? 7 : undefined) }).start();
    const { seen, onEvent } = collect();
    const reconnects: number[] = [];

    const result = await tailEvents({
      url: `${server.url}/v1/sessions/sesn_1/events/stream`,
      headers: { 'x-api-key': 'k' },
      after: 0,
      initialBackoffMs: 5,
      onReconnect: (r) => reconnects.push(r.after),
      onEvent: (e, seq) => {
        onEvent(e, seq);
        return seq === 30 ? 'stop' : undefined;
      },
    });

    expect(result).toEqual({ lastSeq: 30, stop: 'stopped' });
    expect(seen.map((s) => s.seq)).toEqual(events.map((e) => e.seq));
    expect(seen.map((s) => s.id)).toEqual(events.map((e) => e.event.id));
    expect(reconnects).toEqual([7, 14, 21]);
    expect(server.requests.map((r) => [r.after, r.lastEventId])).toEqual([
      ['0', null],
      ['7', '7'],
      ['14', '14'],
      ['21', '21'],
    ]);
    expect(server.requests.every((r) => r.apiKey === 'k')).toBe(true);
  });

  it('skips what a sloppy replay repeats', async () => {
    const events = makeEvents(12);
    server = await new JournalServer({ events, overlap: 3, dropAfter: (n) => (n === 0 ? 8 : undefined) }).start();
    const { seen, onEvent } = collect();
    await tailEvents({
      url: `${server.url}/v1/sessions/s/events/stream`,
      headers: {},
      after: 4,
      initialBackoffMs: 5,
      onEvent: (e, seq) => {
        onEvent(e, seq);
        return seq === 12 ? 'stop' : undefined;
      },
    });
    expect(seen.map((s) => s.seq)).toEqual([5, 6, 7, 8, 9, 10, 11, 12]);
  });

  it('follows live events after the replay', async () => {
    server = await new JournalServer({ events: makeEvents(2) }).start();
    const { seen, onEvent } = collect();
    const done = tailEvents({
      url: `${server.url}/v1/sessions/s/events/stream`,
      headers: {},
      after: 0,
      onEvent: (e, seq) => {
        onEvent(e, seq);
        return e.type === 'session.status_idle' ? 'stop' : undefined;
      },
    });
    const live = server;
    await until(() => seen.length === 2);
    live.push({ seq: 3, event: { id: 'sevt_3', type: 'session.status_idle', processed_at: null, stop_reason: { type: 'end_turn' } } });
    await expect(done).resolves.toEqual({ lastSeq: 3, stop: 'stopped' });
    expect(seen.map((s) => s.id)).toEqual(['sevt_1', 'sevt_2', 'sevt_3']);
  });

  it('does not retry an answer that retrying cannot fix', async () => {
    server = await new JournalServer({ events: [] }).start();
    const attempt = tailEvents({ url: `${server.url}/v1/sessions/s/nope`, headers: {}, after: 0, initialBackoffMs: 5, onEvent: () => undefined });
    await expect(attempt).rejects.toBeInstanceOf(ApiError);
    await expect(attempt).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });

  it('gives up with a connection error when nothing answers', async () => {
    server = await new JournalServer({ events: [] }).start();
    const url = server.url;
    await server.stop();
    server = null;
    const attempt = tailEvents({ url: `${url}/v1/sessions/s/events/stream`, headers: {}, after: 0, initialBackoffMs: 1, maxRetries: 2, onEvent: () => undefined });
    await expect(attempt).rejects.toBeInstanceOf(ConnectionError);
  });

  it('stops cleanly when aborted', async () => {
    server = await new JournalServer({ events: makeEvents(3) }).start();
    const abort = new AbortController();
    const { seen, onEvent } = collect();
    const done = tailEvents({ url: `${server.url}/v1/sessions/s/events/stream`, headers: {}, after: 0, signal: abort.signal, onEvent });
    await until(() => seen.length === 3);
    abort.abort();
    await expect(done).resolves.toEqual({ lastSeq: 3, stop: 'aborted' });
  });
});

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}
