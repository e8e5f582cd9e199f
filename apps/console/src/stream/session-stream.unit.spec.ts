import type { PublicEvent } from '../api/types';
import { openSessionStream, type StreamState } from './session-stream';

const frame = (seq: number, id: string, type = 'agent.message') => `id: ${seq}\ndata: ${JSON.stringify({ id, type, processed_at: null })}\n\n`;

/** A response body that sends `frames`, then either breaks (a dropped connection) or stays open. */
function body(frames: string[], then: 'drop' | 'hang', signal?: AbortSignal | null): Response {
  const queue = [...frames];
  // Pull-based, so the frames are read before the break (an error in `start` would discard them).
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      const next = queue.shift();
      if (next !== undefined) controller.enqueue(new TextEncoder().encode(next));
      else if (then === 'drop') controller.error(new TypeError('terminated'));
      else return new Promise<void>((resolve) => signal?.addEventListener('abort', () => {
        controller.error(new DOMException('aborted', 'AbortError'));
        resolve();
      }));
    },
  });
  return new Response(stream, { status: 200, headers: { 'content-type': 'text/event-stream' } });
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('openSessionStream', () => {
  it('resumes after a dropped connection from the last seq, with no gap and no duplicate', async () => {
    const requests: { url: string; lastEventId: string | null }[] = [];
    const replies = [
      (s?: AbortSignal | null) => body([frame(1, 'a'), frame(2, 'b')], 'drop', s),
      // The server replays from the cursor; a repeated frame must still be shown once.
      (s?: AbortSignal | null) => body([frame(2, 'b'), frame(3, 'c')], 'drop', s),
      (s?: AbortSignal | null) => body([frame(4, 'd')], 'hang', s),
    ];
    const fetchImpl = (async (url: string, init: RequestInit) => {
      const headers = init.headers as Record<string, string>;
      requests.push({ url, lastEventId: headers['last-event-id'] ?? null });
      return replies[requests.length - 1](init.signal);
    }) as unknown as typeof fetch;

    const seen: PublicEvent[] = [];
    const states: StreamState[] = [];
    const stream = openSessionStream({ url: 'http://x/v1/sessions/s/events/stream', headers: {}, onEvent: (e) => seen.push(e), onState: (s) => states.push(s), fetchImpl, initialBackoffMs: 1 });
    await until(() => seen.length === 4, 'four events');
    stream.close();

    expect(seen.map((e) => e.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(requests).toEqual([
      { url: 'http://x/v1/sessions/s/events/stream?after=0', lastEventId: null },
      { url: 'http://x/v1/sessions/s/events/stream?after=2', lastEventId: '2' },
      { url: 'http://x/v1/sessions/s/events/stream?after=3', lastEventId: '3' },
    ]);
    expect(states.map((s) => s.phase)).toContain('reconnecting');
    expect(states.at(-1)).toEqual({ phase: 'closed', error: null });
  });

  it('gives up with a readable reason when the key is refused', async () => {
    const fetchImpl = (async () => new Response('{}', { status: 401 })) as unknown as typeof fetch;
    const states: StreamState[] = [];
    openSessionStream({ url: 'http://x/s', headers: {}, onEvent: () => undefined, onState: (s) => states.push(s), fetchImpl, initialBackoffMs: 1 });
    await until(() => states.at(-1)?.phase === 'closed', 'closed');
    expect(states.at(-1)).toEqual({ phase: 'closed', error: 'The API key was refused' });
  });
});
