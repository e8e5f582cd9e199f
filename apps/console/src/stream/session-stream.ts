import type { PublicEvent } from '../api/types';
import { SseParser } from '@berth/sse';

/**
 * Follows a session's event stream with `fetch` (EventSource cannot send the API key header).
 * Starts from the beginning (`?after=0`), and after a dropped connection resumes from the last
 * sequence it saw (`Last-Event-ID`), waiting 0.5 s, 1 s, 2 s … up to 10 s between attempts.
 * An event it already delivered is never delivered again.
 */

export type StreamState = { phase: 'connecting' | 'live' | 'reconnecting' | 'closed'; error: string | null };

export type SessionStreamOptions = {
  url: string;
  headers: Record<string, string>;
  onEvent: (event: PublicEvent) => void;
  onState: (state: StreamState) => void;
  fetchImpl?: typeof fetch;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
};

export type SessionStream = { close(): void; lastSeq(): number };

export function openSessionStream(opts: SessionStreamOptions): SessionStream {
  const fetchImpl = opts.fetchImpl ?? fetch.bind(globalThis);
  const initial = opts.initialBackoffMs ?? 500;
  const max = opts.maxBackoffMs ?? 10_000;
  const abort = new AbortController();
  const seen = new Set<string>();
  let lastSeq = 0;
  let closed = false;

  const close = (error: string | null = null) => {
    if (closed) return;
    closed = true;
    abort.abort();
    opts.onState({ phase: 'closed', error });
  };

  async function connectOnce(): Promise<'ended' | 'fatal'> {
    const res = await fetchImpl(`${opts.url}?after=${lastSeq}`, {
      headers: { ...opts.headers, accept: 'text/event-stream', ...(lastSeq > 0 ? { 'last-event-id': String(lastSeq) } : {}) },
      signal: abort.signal,
    });
    if (res.status === 401 || res.status === 403 || res.status === 404) {
      close(res.status === 404 ? 'Session not found' : 'The API key was refused');
      return 'fatal';
    }
    if (!res.ok || !res.body) throw new Error(`stream answered HTTP ${res.status}`);
    opts.onState({ phase: 'live', error: null });
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SseParser();
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return 'ended';
      for (const message of parser.feed(value)) {
        const seq = message.id === null ? NaN : Number(message.id);
        if (Number.isFinite(seq) && seq <= lastSeq) continue;
        const event = parseEvent(message.data);
        if (Number.isFinite(seq)) lastSeq = seq;
        if (!event || seen.has(event.id)) continue;
        seen.add(event.id);
        opts.onEvent(event);
        if (event.type === 'session.deleted') {
          close();
          return 'fatal';
        }
      }
    }
  }

  void (async () => {
    let backoff = initial;
    opts.onState({ phase: 'connecting', error: null });
    while (!closed) {
      const before = lastSeq;
      let error: string | null = null;
      try {
        if ((await connectOnce()) === 'fatal') return;
      } catch (e) {
        if (closed) return;
        error = (e as Error).message;
      }
      if (lastSeq > before) backoff = initial;
      opts.onState({ phase: 'reconnecting', error });
      await sleep(backoff, abort.signal);
      backoff = Math.min(backoff * 2, max);
    }
  })();

  return { close: () => close(), lastSeq: () => lastSeq };
}

function parseEvent(data: string): PublicEvent | null {
  try {
    const value = JSON.parse(data) as PublicEvent;
    return value && typeof value.id === 'string' && typeof value.type === 'string' ? value : null;
  } catch {
    return null;
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
