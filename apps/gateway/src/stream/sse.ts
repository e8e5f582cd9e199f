import { PUBLIC_EVENT_TYPES, toPublicEvent, type RecordedEvent } from '@berth/contracts';

/** One SSE frame per event: `id:` is the per-session seq (the resume cursor), `event:` the public type. */
export const sseFrame = (event: RecordedEvent): string =>
  `id: ${event.seq}\nevent: ${PUBLIC_EVENT_TYPES[event.type]}\ndata: ${JSON.stringify(toPublicEvent(event))}\n\n`;

/** A comment line: keeps proxies and idle timers from closing a quiet stream; clients ignore it. */
export const SSE_HEARTBEAT = ': ping\n\n';

/** Where a stream writes; the HTTP response in production, a buffer in tests. */
export type SseSink = Readonly<{
  /** Sends the response head; called once the live subscription is up, so a broker failure can still be a plain error response. */
  open(): void;
  write(chunk: string): void;
  end(): void;
  onClose(listener: () => void): void;
}>;
