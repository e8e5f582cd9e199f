import type { PublicEvent } from '../sse/event-tail';
import { details, eventLine, formatError, table } from './format';

const ev = (type: string, fields: Record<string, unknown> = {}): PublicEvent => ({ id: 'sevt_1', type, processed_at: null, ...fields });

describe('table', () => {
  it('aligns columns under upper-case headers', () => {
    const rows = [
      { id: 'agent_1', name: 'coder' },
      { id: 'agent_22', name: 'reviewer' },
    ];
    expect(
      table(rows, [
        { header: 'id', value: (r) => r.id },
        { header: 'name', value: (r) => r.name },
      ]),
    ).toBe(['ID        NAME', 'agent_1   coder', 'agent_22  reviewer'].join('\n'));
  });

  it('says so when there is nothing to list', () => {
    expect(table([], [{ header: 'id', value: (r: { id: string }) => r.id }])).toBe('(none)');
  });

  it('keeps a multi-line value on its row', () => {
    expect(table([{ t: 'a\nb' }], [{ header: 't', value: (r) => r.t }])).toBe('T\na ⏎ b');
  });
});

describe('details', () => {
  it('aligns keys and shows missing values as a dash', () => {
    expect(details([['id', 'x'], ['archived', null], ['usage', { a: 1 }]])).toBe('id:       x\narchived: -\nusage:    {"a":1}');
  });
});

describe('eventLine', () => {
  it('summarises each kind of event on one line', () => {
    expect(eventLine(ev('agent.message', { content: [{ type: 'text', text: 'Done.\nBye' }] }), 7)).toBe('#7 agent.message  Done. ⏎ Bye');
    expect(eventLine(ev('agent.tool_use', { name: 'bash', input: { command: 'ls' }, evaluated_permission: 'ask' }))).toBe('agent.tool_use  bash {"command":"ls"}  (needs approval)  [sevt_1]');
    expect(eventLine(ev('agent.tool_result', { tool_use_id: 'sevt_0', content: 'boom', is_error: true }))).toBe('agent.tool_result  error for sevt_0: boom');
    expect(eventLine(ev('agent.mcp_tool_use', { mcp_server_name: 'docs', name: 'lookup', input: { key: 'k' } }))).toBe('agent.mcp_tool_use  docs.lookup {"key":"k"}  [sevt_1]');
    expect(eventLine(ev('agent.mcp_tool_result', { mcp_tool_use_id: 'sevt_1', content: [{ type: 'text', text: '42' }], is_error: false }))).toBe('agent.mcp_tool_result  ok for sevt_1: 42');
    expect(eventLine(ev('session.status_idle', { stop_reason: { type: 'requires_action', event_ids: ['a', 'b'] } }))).toBe('session.status_idle  requires_action: a, b');
    expect(eventLine(ev('agent.custom_tool_use', { id: 'sevt_c', name: 'get_weather', input: { city: 'Oslo' } }))).toBe('agent.custom_tool_use  get_weather {"city":"Oslo"}  (waits for your result)  [sevt_c]');
    expect(eventLine(ev('user.custom_tool_result', { custom_tool_use_id: 'sevt_c', content: [{ type: 'text', text: 'sunny' }], is_error: false }))).toBe('user.custom_tool_result  ok for sevt_c: sunny');
    expect(eventLine(ev('session.status_idle', { stop_reason: { type: 'retries_exhausted' }, berth_failure: { reason: 'sandbox_lost', message: 'gone' } }))).toBe(
      'session.status_idle  retries_exhausted: sandbox_lost gone',
    );
    expect(eventLine(ev('session.status_running'), 3)).toBe('#3 session.status_running');
  });

  it('truncates long messages', () => {
    const line = eventLine(ev('agent.message', { content: 'x'.repeat(500) }));
    expect(line.length).toBeLessThan(230);
    expect(line.endsWith('…')).toBe(true);
  });
});

describe('formatError', () => {
  it('prints the message with its code and HTTP status', () => {
    expect(formatError({ message: 'session not found', code: 'SESSION_NOT_FOUND', type: 'not_found_error', status: 404 })).toBe('error: session not found (code SESSION_NOT_FOUND, HTTP 404)');
    expect(formatError({ message: 'the turn failed', code: null, type: 'turn_failed', status: 0 })).toBe('error: the turn failed (code turn_failed)');
  });
});
