import { apiErrorFrom, causeOf } from '../api/client';
import { ApiError, ConnectionError } from '../exit-codes';
import { SseParser } from '@berth/sse';

/** A session event as the API renders it. */
export type PublicEvent = { id: string; type: string; processed_at: string | null } & Record<string, unknown>;

export type TailStop = 'stopped' | 'deleted' | 'aborted';

export type TailOptions = Readonly<{
  /** The stream URL without query (`…/v1/sessions/{id}/events/stream`). */
  url: string;
  headers: Record<string, string>;
  /** Deliver events with seq > after. */
  after: number;
  /** Return 'stop' to end the tail after this event. */
  onEvent: (event: PublicEvent, seq: number) => void | 'stop';
  onReconnect?: (info: { delayMs: number; after: number; reason: string }) => void;
  signal?: AbortSignal;
  fetchImpl?: typeof fetch;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Consecutive attempts that deliver nothing before giving up with a ConnectionError. */
  maxRetries?: number;
}>;

/**
 * Follows a session's events through any number of dropped connections: each reconnect asks for
 * what came after the last seq it delivered (`Last-Event-ID` and `?after=`), and an event whose
 * seq or id it already delivered is skipped, so the caller sees every event exactly once, in order.
 * Backoff: 0.5 s doubling to 10 s, back to 0.5 s once a connection delivers something.
 */
export async function tailEvents(opts: TailOptions): Promise<{ lastSeq: number; stop: TailStop }> {
  const fetchImpl = opts.fetchImpl ?? fetch;
  const initial = opts.initialBackoffMs ?? 500;
  const maxBackoff = opts.maxBackoffMs ?? 10_000;
  const maxRetries = opts.maxRetries ?? 20;
  const seen = new Set<string>();
  let lastSeq = opts.after;
  let backoff = initial;
  let failures = 0;

  const connect = async (): Promise<TailStop | 'ended'> => {
    const res = await fetchImpl(`${opts.url}?after=${lastSeq}`, {
      headers: { ...opts.headers, accept: 'text/event-stream', ...(lastSeq > 0 ? { 'last-event-id': String(lastSeq) } : {}) },
      signal: opts.signal,
    });
    if (!res.ok || !res.body) {
      const text = await res.text();
      const error = apiErrorFrom(res.status, safeJson(text), text);
      // Client errors will not fix themselves by retrying; server errors might.
      if (res.status < 500) throw error;
      throw new Error(`HTTP ${res.status} ${error.message}`);
    }
    const decoder = new TextDecoder();
    const parser = new SseParser();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      for (const message of parser.feed(decoder.decode(chunk, { stream: true }))) {
        const seq = message.id === null ? NaN : Number(message.id);
        if (!Number.isFinite(seq) || seq <= lastSeq) continue;
        lastSeq = seq;
        const event = safeJson(message.data) as PublicEvent | null;
        if (!event || typeof event.id !== 'string' || seen.has(event.id)) continue;
        seen.add(event.id);
        failures = 0;
        backoff = initial;
        if (opts.onEvent(event, seq) === 'stop') return 'stopped';
        if (event.type === 'session.deleted') return 'deleted';
      }
    }
    return 'ended';
  };

  for (;;) {
    if (opts.signal?.aborted) return { lastSeq, stop: 'aborted' };
    let reason: string;
    try {
      const outcome = await connect();
      if (outcome !== 'ended') return { lastSeq, stop: outcome };
      reason = 'stream ended';
    } catch (e) {
      if (opts.signal?.aborted) return { lastSeq, stop: 'aborted' };
      if (e instanceof ApiError) throw e;
      reason = causeOf(e);
    }
    failures += 1;
    if (failures > maxRetries) throw new ConnectionError(`stream lost after ${maxRetries} retries: ${reason}`);
    opts.onReconnect?.({ delayMs: backoff, after: lastSeq, reason });
    await sleep(backoff, opts.signal);
    backoff = Math.min(backoff * 2, maxBackoff);
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
