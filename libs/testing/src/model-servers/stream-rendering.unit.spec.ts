import { anthropicStream } from './anthropic-messages-server';
import { responsesStream } from './openai-responses-server';
import { chunksOf } from './scripted-reply';

const turn = {
  kind: 'turn' as const,
  thinking: 'think',
  text: 'hello world',
  toolCalls: [{ id: 'call_1', name: 'Bash', input: { command: 'echo hi > out.txt' } }],
  chunkSize: 4,
};

describe('Messages API stream rendering', () => {
  const events = anthropicStream(turn, 'claude-test', 10);

  it('frames blocks as the API does: start, deltas, stop per block between message_start and message_stop', () => {
    const names = events.map((e) => e.event).filter((n) => n !== 'content_block_delta');
    expect(names).toEqual([
      'message_start',
      'ping',
      'content_block_start',
      'content_block_stop',
      'content_block_start',
      'content_block_stop',
      'content_block_start',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(events.every((e) => (e.data as { type: string }).type === e.event)).toBe(true);
  });

  it('streams tool input as partial JSON that joins back into the input', () => {
    const partial = events
      .map((e) => (e.data as { delta?: { type: string; partial_json?: string } }).delta)
      .filter((d) => d?.type === 'input_json_delta')
      .map((d) => d?.partial_json)
      .join('');
    expect(JSON.parse(partial)).toEqual({ command: 'echo hi > out.txt' });
  });

  it('stops with tool_use when the reply calls a tool, end_turn otherwise', () => {
    const stopOf = (evs: typeof events) => (evs.find((e) => e.event === 'message_delta')?.data as { delta: { stop_reason: string } }).delta.stop_reason;
    expect(stopOf(events)).toBe('tool_use');
    expect(stopOf(anthropicStream({ kind: 'turn', text: 'hi' }, 'm', 1))).toBe('end_turn');
  });
});

describe('Responses API stream rendering', () => {
  const events = responsesStream(turn, 'gpt-test', 10);

  it('numbers events in order and brackets output items with added/done', () => {
    const sequence = events.map((e) => (e.data as { sequence_number: number }).sequence_number);
    expect(sequence).toEqual([...sequence].sort((a, b) => a - b));
    expect(events.filter((e) => e.event === 'response.output_item.added')).toHaveLength(3);
    expect(events.filter((e) => e.event === 'response.output_item.done')).toHaveLength(3);
  });

  it('delays only the deltas of a slow stream', () => {
    const slow = responsesStream({ kind: 'turn', text: 'abcdef', chunkSize: 2, chunkDelayMs: 50 }, 'm', 1);
    expect(slow.filter((e) => e.delayMs === 50).map((e) => e.event)).toEqual(Array(3).fill('response.output_text.delta'));
  });
});

describe('chunksOf', () => {
  it('splits text into pieces that join back', () => {
    expect(chunksOf('abcdefg', 3)).toEqual(['abc', 'def', 'g']);
    expect(chunksOf('', 3)).toEqual([]);
  });
});
