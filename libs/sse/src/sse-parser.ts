/** One server-sent event as the wire format defines it (https://html.spec.whatwg.org/#event-stream-interpretation). */
export type SseMessage = { id: string | null; event: string; data: string };

/**
 * Incremental SSE parser: feed it text as it arrives (chunks may split lines anywhere), get back
 * the complete messages. Comments (heartbeats) and `retry:` lines produce nothing.
 */
export class SseParser {
  private buffer = '';
  private data: string[] = [];
  private event = '';
  private id: string | null = null;
  private hasField = false;

  feed(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    let start = 0;
    for (;;) {
      const nl = this.nextLineEnd(start);
      if (nl === -1) break;
      const line = this.buffer.slice(start, nl.index);
      start = nl.index + nl.length;
      const message = this.line(line);
      if (message) out.push(message);
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** Finds the next end of line; a lone trailing `\r` waits for more input (it may be `\r\n`). */
  private nextLineEnd(from: number): { index: number; length: number } | -1 {
    for (let i = from; i < this.buffer.length; i++) {
      const c = this.buffer[i];
      if (c === '\n') return { index: i, length: 1 };
      if (c === '\r') {
        if (i + 1 === this.buffer.length) return -1;
        return { index: i, length: this.buffer[i + 1] === '\n' ? 2 : 1 };
      }
    }
    return -1;
  }

  private line(line: string): SseMessage | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.hasField = true;
    } else if (field === 'event') {
      this.event = value;
      this.hasField = true;
    } else if (field === 'id' && !value.includes('\0')) {
      this.id = value;
      this.hasField = true;
    }
    return null;
  }

  private dispatch(): SseMessage | null {
    const message = this.hasField && this.data.length > 0 ? { id: this.id, event: this.event || 'message', data: this.data.join('\n') } : null;
    this.data = [];
    this.event = '';
    this.hasField = false;
    // The spec keeps the last event id across messages; a message without `id:` inherits it.
    return message;
  }
}
