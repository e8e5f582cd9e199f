import type { PublicEvent } from '../api/types';
import { contentText, foldEvents, type ToolBlock } from './fold';

const at = '2026-11-30T12:00:00.000Z';
const ev = (id: string, type: string, fields: Record<string, unknown> = {}): PublicEvent => ({ id, type, processed_at: at, ...fields });
const text = (t: string) => [{ type: 'text', text: t }];

const turnWithTool: PublicEvent[] = [
  ev('e1', 'berth.session_created'),
  ev('e2', 'user.message', { content: text('list the files') }),
  ev('e3', 'session.status_running'),
  ev('e4', 'agent.tool_use', { name: 'bash', input: { command: 'ls' }, evaluated_permission: 'allow' }),
  ev('e5', 'agent.tool_result', { tool_use_id: 'e4', content: text('a.txt\nb.txt'), is_error: false }),
  ev('e6', 'agent.message', { content: text('There are two files.') }),
  ev('e7', 'session.usage', { usage: { input_tokens: 10, output_tokens: 5 } }),
  ev('e8', 'session.status_idle', { stop_reason: { type: 'end_turn' } }),
];

describe('foldEvents', () => {
  it('folds a tool use and its result into one block between the messages', () => {
    const view = foldEvents(turnWithTool);
    expect(view.blocks.map((b) => b.kind)).toEqual(['user_message', 'status', 'tool', 'agent_message', 'status']);
    const tool = view.blocks[2] as ToolBlock;
    expect(tool).toMatchObject({ id: 'e4', name: 'bash', input: { command: 'ls' }, permission: 'allow', result: { text: 'a.txt\nb.txt', isError: false } });
    expect(view.status).toBe('idle');
    expect(view.usage).toEqual({ input_tokens: 10, output_tokens: 5 });
  });

  it('folds an MCP tool call and its result into one block named by server and tool', () => {
    const view = foldEvents([
      ev('m1', 'agent.mcp_tool_use', { mcp_server_name: 'docs', name: 'lookup', input: { key: 'k' }, evaluated_permission: 'allow' }),
      ev('m2', 'agent.mcp_tool_result', { mcp_tool_use_id: 'm1', content: text('the value of k is 42'), is_error: false }),
    ]);
    expect(view.blocks).toHaveLength(1);
    expect(view.blocks[0]).toMatchObject({ kind: 'tool', id: 'm1', name: 'docs.lookup', input: { key: 'k' }, result: { text: 'the value of k is 42', isError: false } });
  });

  it('offers a turn as a fork point once it completed with a workspace snapshot, and no longer once retention dropped it', () => {
    const checkpointed = (id: string, turn: string, message: string, snapshot: unknown, dropped: string[] = []) =>
      ev(id, 'berth.turn_checkpointed', { turn_id: turn, message_event_id: message, workspace_snapshot: snapshot, dropped_turn_ids: dropped });
    const one = [...turnWithTool.slice(0, 7), checkpointed('c1', 'turn_1', 'e2', { bytes: 10, files: 1 }), turnWithTool[7]];
    expect(foldEvents(turnWithTool).forkable).toEqual([]);
    expect(foldEvents(one).forkable).toEqual(['e2']);
    expect(foldEvents(one).blocks.map((b) => b.kind)).toEqual(['user_message', 'status', 'tool', 'agent_message', 'status']);
    const noSnapshot = [...one, ev('m2', 'user.message', { content: text('again') }), checkpointed('c2', 'turn_2', 'm2', null)];
    expect(foldEvents(noSnapshot).forkable).toEqual(['e2']);
    const dropped = [...one, ev('m3', 'user.message', { content: text('more') }), checkpointed('c3', 'turn_3', 'm3', { bytes: 1, files: 1 }, ['turn_1'])];
    expect(foldEvents(dropped).forkable).toEqual(['m3']);
  });

  it('shows nothing twice when a replay repeats events', () => {
    const replayed = [...turnWithTool.slice(0, 6), ...turnWithTool.slice(2)];
    expect(foldEvents(replayed)).toEqual(foldEvents(turnWithTool));
  });

  it('marks a failed tool result as an error', () => {
    const view = foldEvents([ev('t', 'agent.tool_use', { name: 'read', input: {} }), ev('r', 'agent.tool_result', { tool_use_id: 't', content: 'no such file', is_error: true })]);
    expect((view.blocks[0] as ToolBlock).result).toEqual({ text: 'no such file', isError: true });
  });

  it('keeps a result whose tool use it never saw, and names it when the use arrives', () => {
    const resultOnly = foldEvents([ev('r', 'agent.tool_result', { tool_use_id: 't', content: text('ok') })]);
    expect(resultOnly.blocks).toHaveLength(1);
    expect(resultOnly.blocks[0]).toMatchObject({ kind: 'tool', id: 't', name: 'tool', result: { text: 'ok' } });
    const late = foldEvents([ev('r', 'agent.tool_result', { tool_use_id: 't', content: text('ok') }), ev('t', 'agent.tool_use', { name: 'grep', input: { pattern: 'x' } })]);
    expect(late.blocks).toHaveLength(1);
    expect(late.blocks[0]).toMatchObject({ name: 'grep', input: { pattern: 'x' }, result: { text: 'ok' } });
  });

  describe('custom tool calls', () => {
    const calling = [
      ev('w', 'agent.custom_tool_use', { name: 'get_weather', input: { city: 'Oslo' } }),
      ev('i1', 'session.status_idle', { stop_reason: { type: 'requires_action', event_ids: ['w'] } }),
    ];

    it('waits on the call for its result (not an approval)', () => {
      const view = foldEvents(calling);
      expect(view.status).toBe('waiting');
      expect(view.pendingToolUseIds).toEqual(['w']);
      expect(view.blocks[0]).toMatchObject({ kind: 'tool', id: 'w', name: 'get_weather', custom: true, awaitingConfirmation: true, result: null });
      expect(view.blocks[1]).toMatchObject({ kind: 'status', label: 'Waiting for a tool result' });
    });

    it('shows the result sent and stops waiting', () => {
      const view = foldEvents([...calling, ev('r1', 'user.custom_tool_result', { custom_tool_use_id: 'w', content: text('sunny'), is_error: false }), ev('s1', 'session.status_running')]);
      expect(view.pendingToolUseIds).toEqual([]);
      expect(view.blocks[0]).toMatchObject({ id: 'w', custom: true, awaitingConfirmation: false, result: { text: 'sunny', isError: false } });
    });
  });

  describe('tool confirmation', () => {
    const asking = [
      ev('u', 'agent.tool_use', { name: 'bash', input: { command: 'rm -rf build' }, evaluated_permission: 'ask' }),
      ev('v', 'agent.tool_use', { name: 'write', input: { file_path: 'x' }, evaluated_permission: 'ask' }),
      ev('i1', 'session.status_idle', { stop_reason: { type: 'requires_action', event_ids: ['u', 'v'] } }),
    ];

    it('waits on every tool use named by requires_action', () => {
      const view = foldEvents(asking);
      expect(view.status).toBe('waiting');
      expect(view.pendingToolUseIds).toEqual(['u', 'v']);
      expect(view.blocks.filter((b): b is ToolBlock => b.kind === 'tool').map((t) => t.awaitingConfirmation)).toEqual([true, true]);
    });

    it('stops waiting on a call once it is answered, and records the answer', () => {
      const view = foldEvents([...asking, ev('c1', 'user.tool_confirmation', { tool_use_id: 'u', result: 'deny', deny_message: 'not that' })]);
      expect(view.pendingToolUseIds).toEqual(['v']);
      const denied = view.blocks.find((b) => b.id === 'u') as ToolBlock;
      expect(denied.confirmation).toEqual({ result: 'deny', denyMessage: 'not that' });
      expect(denied.awaitingConfirmation).toBe(false);
    });

    it('clears pending calls when the turn ends', () => {
      const view = foldEvents([...asking, ev('s', 'session.status_running'), ev('i2', 'session.status_idle', { stop_reason: { type: 'end_turn' } })]);
      expect(view.pendingToolUseIds).toEqual([]);
      expect(view.status).toBe('idle');
    });
  });

  it('explains a failed turn with the reason Berth gives', () => {
    const view = foldEvents([ev('f', 'session.status_idle', { stop_reason: { type: 'retries_exhausted' }, berth_failure: { reason: 'sandbox_lost', message: 'container died' } })]);
    expect(view.blocks[0]).toEqual({ kind: 'status', id: 'f', label: 'Turn failed', tone: 'failed', detail: 'sandbox_lost: container died' });
  });

  it('shows session errors with their retry status', () => {
    const view = foldEvents([ev('x', 'session.error', { error: { type: 'model_overloaded_error', message: 'busy', retry_status: { type: 'retrying' } } })]);
    expect(view.blocks[0]).toEqual({ kind: 'error', id: 'x', errorType: 'model_overloaded_error', message: 'busy', retryStatus: 'retrying' });
  });

  it('shows a refused network request with the message that says what would allow it', () => {
    const message = 'Berth egress refused example.com:443: environment env_1 has limited networking and "example.com" is not in config.networking.allowed_hosts.';
    const view = foldEvents([ev('a', 'berth.egress_denied', { reason: 'host_not_allowed', message })]);
    expect(view.blocks).toEqual([{ kind: 'notice', id: 'a', label: 'Network request refused', detail: message }]);
  });

  it('shows the Berth notices a reader cares about and hides bookkeeping', () => {
    const view = foldEvents([ev('a', 'berth.session_created'), ev('b', 'berth.sandbox_bound'), ev('c', 'berth.harness_session'), ev('d', 'berth.turn_recovered', { outcome: 'recovered_from_transcript' })]);
    expect(view.blocks).toEqual([
      { kind: 'notice', id: 'b', label: 'Sandbox ready', detail: null },
      { kind: 'notice', id: 'd', label: 'Turn recovered', detail: 'recovered_from_transcript' },
    ]);
  });

  it('says where an imported session came from', () => {
    const view = foldEvents([ev('i', 'berth.session_imported', { from_session_id: 'sesn_src', exported_at: '2026-12-02T04:00:00.000Z', files: [], workspace: true })]);
    expect(view.blocks).toEqual([{ kind: 'notice', id: 'i', label: 'Imported', detail: 'from sesn_src, exported 2026-12-02T04:00:00.000Z' }]);
  });

  it('tracks termination and deletion', () => {
    expect(foldEvents([ev('t', 'session.status_terminated')]).status).toBe('terminated');
    expect(foldEvents([ev('t', 'session.status_terminated'), ev('d', 'session.deleted')]).status).toBe('deleted');
  });
});

describe('contentText', () => {
  it('joins text blocks and names the others', () => {
    expect(contentText([{ type: 'text', text: 'see' }, { type: 'image', source: {} }])).toBe('see\n[image]');
    expect(contentText('plain')).toBe('plain');
    expect(contentText(undefined)).toBe('');
  });
});
