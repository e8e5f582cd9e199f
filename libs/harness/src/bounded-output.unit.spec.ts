import { jsonBytes, PayloadLimits, type AgentOutput } from '@berth/contracts';
import { boundAgentOutput, splitOutputs } from './bounded-output';
import { harnessAdapterFor } from './harness-adapters';

const LIMIT = PayloadLimits.agentOutputBytes;
const MB = 1024 * 1024;
const textOf = (output: AgentOutput): string =>
  output.kind === 'message' || output.kind === 'tool_result' || output.kind === 'mcp_tool_result'
    ? (output.content as readonly Record<string, unknown>[]).map((b) => (typeof b.text === 'string' ? b.text : '')).join('')
    : '';

describe('boundAgentOutput', () => {
  it('cuts a 5 MB tool result to the limit, keeps its start and says how much was cut', () => {
    const stdout = Array.from({ length: 100_000 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n').slice(0, 5 * MB);
    const bounded = boundAgentOutput({ kind: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: stdout }], is_error: false });
    expect(jsonBytes(bounded)).toBeLessThanOrEqual(LIMIT);
    expect(bounded).toMatchObject({ kind: 'tool_result', tool_use_id: 'toolu_1', is_error: false });
    const text = textOf(bounded);
    const kept = text.slice(0, text.indexOf('\n[Berth: '));
    expect(stdout.startsWith(kept)).toBe(true);
    expect(kept.length).toBeGreaterThan(LIMIT / 2);
    expect(text).toContain(`[Berth: ${Buffer.byteLength(stdout) - Buffer.byteLength(kept)} more bytes of this output were cut; one agent output is kept to ${LIMIT} bytes]`);
  });

  it('bounds the calls and results of MCP tools the same way', () => {
    const big = 'y'.repeat(2 * MB);
    const result = boundAgentOutput({ kind: 'mcp_tool_result', tool_use_id: 'toolu_m', content: [{ type: 'text', text: big }], is_error: false });
    expect(jsonBytes(result)).toBeLessThanOrEqual(LIMIT);
    expect(textOf(result)).toContain('more bytes of this output were cut');
    const call = boundAgentOutput({ kind: 'mcp_tool_use', tool_use_id: 'toolu_m', server_name: 'docs', name: 'put', input: { text: big }, needs_confirmation: false });
    expect(jsonBytes(call)).toBeLessThanOrEqual(LIMIT);
    expect(call).toMatchObject({ kind: 'mcp_tool_use', server_name: 'docs', input: { berth_truncated_input: expect.stringMatching(/^\{"text":"yyy/) } });
  });

  it('leaves an output under the limit untouched', () => {
    const small: AgentOutput = { kind: 'message', content: [{ type: 'text', text: 'hi' }] };
    expect(boundAgentOutput(small)).toBe(small);
  });

  it('fits text that JSON escaping inflates, and never splits a character', () => {
    const escaped = boundAgentOutput({ kind: 'message', content: [{ type: 'text', text: '"\u0001\n'.repeat(400_000) }] });
    expect(jsonBytes(escaped)).toBeLessThanOrEqual(LIMIT);
    const emoji = boundAgentOutput({ kind: 'message', content: [{ type: 'text', text: '😀é'.repeat(300_000) }] });
    expect(jsonBytes(emoji)).toBeLessThanOrEqual(LIMIT);
    expect(textOf(emoji)).not.toContain('\uFFFD');
  });

  it('drops later blocks into the count and replaces a block too big to keep whole by a note', () => {
    const bounded = boundAgentOutput({
      kind: 'tool_result',
      tool_use_id: 'toolu_2',
      content: [{ type: 'image', source: { type: 'base64', data: 'A'.repeat(2 * MB) } }, { type: 'text', text: 'a'.repeat(MB) }, { type: 'text', text: 'tail' }],
      is_error: false,
    });
    expect(jsonBytes(bounded)).toBeLessThanOrEqual(LIMIT);
    expect(bounded.kind === 'tool_result' && bounded.content[0]).toMatchObject({ type: 'text', text: expect.stringMatching(/^\[Berth: a image block of \d+ bytes was dropped/) });
    expect(textOf(bounded)).not.toContain('tail');
  });

  it('replaces a huge tool input by its JSON prefix, marked', () => {
    const bounded = boundAgentOutput({ kind: 'tool_use', tool_use_id: 'toolu_3', name: 'Write', input: { file_path: '/w/a', content: 'z'.repeat(2 * MB) }, needs_confirmation: false });
    expect(jsonBytes(bounded)).toBeLessThanOrEqual(LIMIT);
    expect(bounded).toMatchObject({ kind: 'tool_use', name: 'Write', input: { berth_truncated_input: expect.stringMatching(/^\{"file_path":"\/w\/a","content":"zzz/) } });
  });

  it('is deterministic (the live stream and a recovery from the output file agree)', () => {
    const big: AgentOutput = { kind: 'message', content: [{ type: 'text', text: 'q'.repeat(3 * MB) }] };
    expect(boundAgentOutput(big)).toEqual(boundAgentOutput(structuredClone(big)));
  });
});

describe('splitOutputs', () => {
  it('keeps order and offsets, and every run under the command limit and count', () => {
    const outputs = Array.from({ length: 12 }, (_, i) => boundAgentOutput({ kind: 'message', content: [{ type: 'text', text: `${i}`.repeat(MB) }] }));
    const runs = splitOutputs(outputs, 5);
    expect(runs.flat()).toEqual(outputs);
    for (const run of runs) {
      expect(run.length).toBeLessThanOrEqual(5);
      expect(jsonBytes(run)).toBeLessThan(PayloadLimits.commandBytes);
    }
    expect(splitOutputs(['a', 'b', 'c'], 2)).toEqual([['a', 'b'], ['c']]);
  });
});

describe('every harness adapter bounds what it parses', () => {
  it('a Claude Code tool result of 5 MB comes out under the limit', () => {
    const adapter = harnessAdapterFor('claude-code');
    const line = JSON.stringify({
      type: 'user',
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_big', content: 'y'.repeat(5 * MB), is_error: false }] },
      session_id: 'hs-1',
    });
    const step = adapter.parseLine(line, adapter.initialState('always_allow'));
    const result = step.outputs.find((o) => o.kind === 'tool_result') as AgentOutput;
    expect(result).toMatchObject({ kind: 'tool_result', tool_use_id: 'toolu_big' });
    expect(jsonBytes(result)).toBeLessThanOrEqual(LIMIT);
    expect(textOf(result)).toContain('more bytes of this output were cut');
  });
});
