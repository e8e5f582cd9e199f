import { DeciderSpec } from '@berth/core/testing';
import { sessionDecider } from '../decide';
import { deriveSessionView } from '../read/session-view';
import { Cmd, historyOf, readySession, runningTurn, stateOf } from '../testing/builders';

const spec = DeciderSpec.for(sessionDecider);

describe('CreateSession', () => {
  it('creates the session and requests its first sandbox', () => {
    const create = Cmd.create({ title: 'fix the build' });
    spec.given([]).when(create).then([
      {
        type: 'SessionCreated',
        data: {
          owner_id: 'owner_1',
          agent: { id: 'agent_1', version: 1 },
          environment_id: 'env_1',
          harness: 'claude-code',
          title: 'fix the build',
          metadata: {},
          idempotency_key: 'key-1',
          permission_mode: 'always_allow',
        },
      },
      { type: 'SandboxRequested', data: { generation: 1, reason: 'startup' } },
    ]);
  });

  it('pins the vaults it names in SessionCreated, the state and the view; a session without any records none', () => {
    const [created] = historyOf(Cmd.create({ vault_ids: ['vlt_b', 'vlt_a'] }));
    expect(created?.data).toMatchObject({ vault_ids: ['vlt_b', 'vlt_a'] });
    expect(stateOf(Cmd.create({ vault_ids: ['vlt_b', 'vlt_a'] })).vault_ids).toEqual(['vlt_b', 'vlt_a']);
    expect(deriveSessionView(stateOf(Cmd.create({ vault_ids: ['vlt_b'] }))).vault_ids).toEqual(['vlt_b']);
    expect(historyOf(Cmd.create())[0]?.data).not.toHaveProperty('vault_ids');
    expect(stateOf(Cmd.create()).vault_ids).toEqual([]);
  });

  it('is a no-op when the same owner retries with the same agent and idempotency key', () => {
    spec.given(historyOf(Cmd.create())).when(Cmd.create()).thenNothingHappened();
  });

  it.each([
    ['another owner', { owner_id: 'owner_2' }],
    ['another agent (subject)', { agent: { id: 'agent_2', version: 1 } }],
    ['another idempotency key', { idempotency_key: 'key-2' }],
    ['no idempotency key', { idempotency_key: null }],
  ])('refuses a create on an existing session from %s with IDEMPOTENCY_KEY_CONFLICT', (_name, over) => {
    spec.given(historyOf(Cmd.create())).when(Cmd.create(over)).thenThrows('IDEMPOTENCY_KEY_CONFLICT', 409);
  });

  it('refuses to reuse the key of a deleted session with IDEMPOTENCY_KEY_RETIRED', () => {
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.create()).thenThrows('IDEMPOTENCY_KEY_RETIRED', 409);
  });
});

describe('UpdateSession', () => {
  it('records only the fields that change', () => {
    spec
      .given(historyOf(Cmd.create({ metadata: { a: '1', b: '2' } })))
      .when(Cmd.update({ title: 'new', metadata: { a: '1', b: null, c: '3' } }))
      .then([{ type: 'SessionUpdated', data: { title: 'new', metadata: { b: null, c: '3' } } }]);
  });

  it('is a no-op when nothing changes', () => {
    spec.given(historyOf(Cmd.create({ title: 't', metadata: { a: '1' } }))).when(Cmd.update({ title: 't', metadata: { a: '1', z: null } })).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND and a deleted one with AGENT_RUNTIME_ERROR', () => {
    spec.given([]).when(Cmd.update({ title: 'x' })).thenThrows('NOT_FOUND', 404);
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.update({ title: 'x' })).thenThrows('AGENT_RUNTIME_ERROR', 409);
  });
});

describe('TerminateSession', () => {
  it('releases the bound sandbox', () => {
    spec.given(historyOf(...readySession())).when(Cmd.terminate()).then([{ type: 'SessionTerminated', data: { sandbox_id: 'sbx_1' } }]);
  });

  it('fails an active turn first: its sandbox is taken away', () => {
    spec.given(historyOf(...runningTurn())).when(Cmd.terminate()).then([
      { type: 'TurnFailed', data: { turn_id: 'turn_1', reason: 'sandbox_lost', message: 'the session was terminated' } },
      { type: 'SessionTerminated', data: { sandbox_id: 'sbx_1' } },
    ]);
  });

  it('accepts a TERMINATED session as an idempotent no-op', () => {
    spec.given(historyOf(...readySession(), Cmd.terminate())).when(Cmd.terminate()).thenNothingHappened();
  });

  it('refuses a DELETED session with AGENT_RUNTIME_ERROR', () => {
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.terminate()).thenThrows('AGENT_RUNTIME_ERROR', 409);
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.terminate()).thenThrows('NOT_FOUND', 404);
  });
});

describe('EndConversation', () => {
  it('ends the harness conversation, also on a TERMINATED session', () => {
    spec.given(historyOf(...readySession())).when(Cmd.end()).then([{ type: 'ConversationEnded', data: {} }]);
    spec.given(historyOf(...readySession(), Cmd.terminate())).when(Cmd.end()).then([{ type: 'ConversationEnded', data: {} }]);
  });

  it('is a no-op when the conversation already ended', () => {
    spec.given(historyOf(...readySession(), Cmd.end())).when(Cmd.end()).thenNothingHappened();
  });

  it('refuses while a turn is active with SESSION_BUSY, and a DELETED session with AGENT_RUNTIME_ERROR', () => {
    spec.given(historyOf(...runningTurn())).when(Cmd.end()).thenThrows('SESSION_BUSY', 409);
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.end()).thenThrows('AGENT_RUNTIME_ERROR', 409);
  });
});

describe('ArchiveSession', () => {
  it('archives and releases the sandbox, failing an active turn', () => {
    spec.given(historyOf(...readySession())).when(Cmd.archive()).then([{ type: 'SessionArchived', data: {} }]);
    spec.given(historyOf(...runningTurn())).when(Cmd.archive()).then([
      { type: 'TurnFailed', data: { turn_id: 'turn_1', reason: 'sandbox_lost', message: 'the session was archived' } },
      { type: 'SessionArchived', data: {} },
    ]);
  });

  it('is a no-op on an archived session', () => {
    spec.given(historyOf(...readySession(), Cmd.archive())).when(Cmd.archive()).thenNothingHappened();
  });

  it('refuses DELETED and TERMINATED sessions with AGENT_RUNTIME_ERROR (409)', () => {
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.archive()).thenThrows('AGENT_RUNTIME_ERROR', 409);
    spec.given(historyOf(...readySession(), Cmd.terminate())).when(Cmd.archive()).thenThrows('AGENT_RUNTIME_ERROR', 409);
  });
});

describe('DeleteSession', () => {
  it('deletes from any state, failing an active turn', () => {
    spec.given(historyOf(...readySession(), Cmd.terminate())).when(Cmd.delete()).then([{ type: 'SessionDeleted', data: {} }]);
    spec.given(historyOf(...runningTurn())).when(Cmd.delete()).then([
      { type: 'TurnFailed', data: { turn_id: 'turn_1', reason: 'sandbox_lost', message: 'the session was deleted' } },
      { type: 'SessionDeleted', data: {} },
    ]);
  });

  it('is a no-op on a DELETED session', () => {
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.delete()).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.delete()).thenThrows('NOT_FOUND', 404);
  });
});

describe('SetPermissionMode', () => {
  it('records a new mode, even without a runtime', () => {
    spec.given(historyOf(...readySession(), Cmd.died(1))).when(Cmd.permission('always_ask')).then([{ type: 'PermissionModeSet', data: { mode: 'always_ask' } }]);
  });

  it('is a no-op when the mode is already set', () => {
    spec.given(historyOf(...readySession())).when(Cmd.permission('always_allow')).thenNothingHappened();
  });

  it('refuses CREATING (SESSION_BUSY), TERMINATED and DELETED (AGENT_RUNTIME_ERROR)', () => {
    spec.given(historyOf(Cmd.create())).when(Cmd.permission('always_ask')).thenThrows('SESSION_BUSY', 409);
    spec.given(historyOf(...readySession(), Cmd.terminate())).when(Cmd.permission('always_ask')).thenThrows('AGENT_RUNTIME_ERROR', 409);
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.permission('always_ask')).thenThrows('AGENT_RUNTIME_ERROR', 409);
  });
});

describe('RaiseSessionError', () => {
  it('records the error against the current turn', () => {
    spec.given(historyOf(...runningTurn())).when(Cmd.error('dead-lettered')).then([
      { type: 'SessionErrorRaised', data: { turn_id: 'turn_1', error_type: 'unknown_error', message: 'dead-lettered', retry_status: 'terminal' } },
    ]);
  });

  it('is a no-op on a DELETED session, which nobody can read', () => {
    spec.given(historyOf(Cmd.create(), Cmd.delete())).when(Cmd.error()).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.error()).thenThrows('NOT_FOUND', 404);
  });
});
