import type { RecordedEvent } from '@berth/contracts';
import type { ManagerInput } from './inputs';
import { emptySessionView, foldSessionEvent, SESSION_VIEW_EVENT_TYPES, type SessionView } from './session-view';
import { boundSession, SANDBOX, startedTurn, TURN } from './testing/manager-fixtures';

const fold = (inputs: readonly ManagerInput[]): SessionView =>
  inputs.reduce((v, i) => (i.kind === 'event' ? foldSessionEvent(v, i.event) : v), emptySessionView());
const eventOf = (input: ManagerInput): RecordedEvent => (input as { event: RecordedEvent }).event;

describe('the sandbox-manager session view', () => {
  it('keeps who owns the session, its environment, agent version, harness and sandbox binding', () => {
    expect(fold(boundSession('always_ask').history)).toMatchObject({
      owner_id: 'own_1',
      environment_id: 'env_1',
      agent: { id: 'agent_1', version: 2 },
      harness: 'claude-code',
      permission_mode: 'always_ask',
      sandbox: { sandbox_id: SANDBOX, generation: 1, expires_at: null },
      sandbox_request: null,
      lifecycle: 'open',
    });
  });

  it('changes nothing for an event at or below the last folded seq (a redelivery or an overlapping read)', () => {
    const { history } = startedTurn();
    const view = fold(history);
    expect(foldSessionEvent(view, eventOf(history[0]))).toBe(view);
    expect(foldSessionEvent(view, eventOf(history[history.length - 1]))).toBe(view);
  });

  it('keeps a message until its turn ends, queued ones included', () => {
    const { j, history } = startedTurn();
    history.push(j.event('UserMessageReceived', { turn_id: 'turn_2', content: [{ type: 'text', text: 'next' }], queued: true }));
    expect(Object.keys(fold(history).prompts)).toEqual([TURN, 'turn_2']);
    history.push(j.event('TurnCompleted', { turn_id: TURN, interrupted: false }), j.event('TurnStarted', { turn_id: 'turn_2' }));
    const view = fold(history);
    expect(Object.keys(view.prompts)).toEqual(['turn_2']);
    expect(view.turn?.turn_id).toBe('turn_2');
  });

  it('maps only the tool uses that asked, and follows which of them still wait', () => {
    const { j, history } = startedTurn('always_ask');
    history.push(j.event('AgentToolUseRecorded', { turn_id: TURN, offset: 0, harness_tool_use_id: 'toolu_read', name: 'Read', input: {}, evaluated_permission: 'allow' }));
    history.push(j.event('AgentToolUseRecorded', { turn_id: TURN, offset: 1, harness_tool_use_id: 'toolu_bash', name: 'Bash', input: {}, evaluated_permission: 'ask' }));
    const askId = j.lastId();
    history.push(j.event('TurnAwaitingConfirmation', { turn_id: TURN, event_ids: [askId] }));
    expect(fold(history).turn).toMatchObject({ asks: { [askId]: 'toolu_bash' }, pending: [askId] });
    history.push(j.event('ToolUseConfirmed', { turn_id: TURN, tool_use_event_id: askId, result: 'allow', deny_message: null }));
    expect(fold(history).turn?.pending).toEqual([]);
  });

  it('drops the binding of a lost sandbox and everything waiting once the session is terminated; a recover reopens it', () => {
    const { j, history } = startedTurn();
    history.push(j.event('SandboxLost', { sandbox_id: SANDBOX, generation: 1, cause: 'die' }));
    expect(fold(history).sandbox).toBeNull();
    history.push(j.event('SessionTerminated', { sandbox_id: null }));
    expect(fold(history)).toMatchObject({ lifecycle: 'terminated', turn: null, prompts: {}, sandbox_request: null });
    history.push(j.event('SessionRecovered', { outcome: 'startup-requested', reason: 'sandbox_missing', policy: 'auto' }));
    expect(fold(history).lifecycle).toBe('open');
  });

  it('folds only the event types it declares', () => {
    for (const type of ['AgentMessageRecorded', 'UsageRecorded', 'AgentToolResultRecorded'] as const) expect(SESSION_VIEW_EVENT_TYPES).not.toContain(type);
  });
});
