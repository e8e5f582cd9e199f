import { SseParser } from './sse-parser';

describe('SseParser', () => {
  it('parses messages split across arbitrary chunks', () => {
    const wire = 'id: 1\ndata: {"a":1}\n\n: heartbeat\n\nid: 2\nevent: note\ndata: line one\ndata: line two\n\n';
    for (let size = 1; size <= wire.length; size++) {
      const parser = new SseParser();
      const out = [];
      for (let i = 0; i < wire.length; i += size) out.push(...parser.feed(wire.slice(i, i + size)));
      expect(out).toEqual([
        { id: '1', event: 'message', data: '{"a":1}' },
        { id: '2', event: 'note', data: 'line one\nline two' },
      ]);
    }
  });

  it('accepts CRLF and CR line endings', () => {
    const parser = new SseParser();
    expect(parser.feed('id: 7\r\ndata: x\r\n\r\nid: 8\rdata: y\r\r\n')).toEqual([
      { id: '7', event: 'message', data: 'x' },
      { id: '8', event: 'message', data: 'y' },
    ]);
  });

  it('ignores comments, retry lines and a message cut off before its blank line', () => {
    const parser = new SseParser();
    expect(parser.feed(': ping\nretry: 1000\n\nid: 3\ndata: half')).toEqual([]);
  });
});
