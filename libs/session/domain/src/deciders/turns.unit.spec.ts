import { DeciderSpec } from '@berth/core/testing';
import { sessionDecider } from '../decide';
import { Cmd, historyOf, Out, partial, readySession, runningTurn } from '../testing/builders';

const spec = DeciderSpec.for(sessionDecider);
const text = (t: string) => [{ type: 'text' as const, text: t }];

describe('RecordAgentOutput', () => {
  it('records each output as an event at its offset, and the harness session once', () => {
    spec
      .given(historyOf(...runningTurn()))
      .when(Cmd.output('turn_1', 0, [Out.thinking(), Out.message('hi'), Out.usage(10, 5)], 1, 'hs-1'))
      .then([
        { type: 'HarnessSessionRecorded', data: { turn_id: 'turn_1', harness_session_id: 'hs-1' } },
        { type: 'AgentThinkingRecorded', data: { turn_id: 'turn_1', offset: 0 } },
        { type: 'AgentMessageRecorded', data: { turn_id: 'turn_1', offset: 1, content: text('hi') } },
        { type: 'UsageRecorded', data: { turn_id: 'turn_1', offset: 2, usage: { input_tokens: 10, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } } },
      ]);
  });

  it('keeps usage cumulative across reports', () => {
    spec
      .given(historyOf(...runningTurn(), Cmd.output('turn_1', 0, [Out.usage(10, 5)])))
      .when(Cmd.output('turn_1', 1, [Out.usage(1, 2)]))
      .then([{ type: 'UsageRecorded', data: { turn_id: 'turn_1', offset: 1, usage: { input_tokens: 11, output_tokens: 7, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } } }]);
  });

  it('maps a tool result to the public event id of its tool use, across commands', () => {
    spec
      .given(historyOf(...runningTurn(), Cmd.output('turn_1', 0, [Out.toolUse('toolu_1')], 1, null, 'cmd_use')))
      .when(Cmd.output('turn_1', 1, [Out.toolResult('toolu_1'), Out.toolResult('toolu_unknown')]))
      .thenMatches(partial([
        { type: 'AgentToolResultRecorded', data: { offset: 1, tool_use_event_id: 'sevt_use_0' } },
        { type: 'AgentToolResultRecorded', data: { offset: 2, tool_use_event_id: null } },
      ]));
  });

  it('asks for confirmation of a tool use that needs it, naming the event ids it creates', () => {
    spec
      .given(historyOf(...runningTurn()))
      .when(Cmd.output('turn_1', 0, [Out.message('let me look'), Out.toolUse('toolu_1', true), Out.toolResult('toolu_1')], 1, null, 'cmd_x'))
      .then([
        { type: 'AgentMessageRecorded', data: { turn_id: 'turn_1', offset: 0, content: text('let me look') } },
        {
          type: 'AgentToolUseRecorded',
          data: { turn_id: 'turn_1', offset: 1, harness_tool_use_id: 'toolu_1', name: 'bash', input: { command: 'ls' }, evaluated_permission: 'ask' },
        },
        { type: 'AgentToolResultRecorded', data: { turn_id: 'turn_1', offset: 2, tool_use_event_id: 'sevt_x_1', content: [{ type: 'text', text: 'ok' }], is_error: false } },
        { type: 'TurnAwaitingConfirmation', data: { turn_id: 'turn_1', event_ids: ['sevt_x_1'] } },
      ]);
  });

  it('skips outputs at offsets already recorded', () => {
    spec
      .given(historyOf(...runningTurn(), Cmd.output('turn_1', 0, [Out.message('a'), Out.message('b')])))
      .when(Cmd.output('turn_1', 1, [Out.message('b'), Out.message('c')]))
      .then([{ type: 'AgentMessageRecorded', data: { turn_id: 'turn_1', offset: 2, content: text('c') } }]);
  });

  it('is a no-op for a redelivered batch, another turn, or a stale sandbox generation', () => {
    const history = historyOf(...runningTurn(), Cmd.output('turn_1', 0, [Out.message('a')]));
    spec.given(history).when(Cmd.output('turn_1', 0, [Out.message('a')])).thenNothingHappened();
    spec.given(history).when(Cmd.output('turn_9', 1, [Out.message('x')])).thenNothingHappened();
    spec.given(history).when(Cmd.output('turn_1', 1, [Out.message('x')], 7)).thenNothingHappened();
    spec.given(historyOf(...runningTurn(), Cmd.died(1))).when(Cmd.output('turn_1', 0, [Out.message('late')])).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.output('turn_1', 0, [Out.message('a')])).thenThrows('NOT_FOUND', 404);
  });
});

describe('CompleteTurn', () => {
  it('settles the turn and starts the next queued message', () => {
    spec.given(historyOf(...runningTurn(), Cmd.message('turn_2'), Cmd.message('turn_3'))).when(Cmd.complete('turn_1', 1, false, 'hs-1')).then([
      { type: 'HarnessSessionRecorded', data: { turn_id: 'turn_1', harness_session_id: 'hs-1' } },
      { type: 'TurnCompleted', data: { turn_id: 'turn_1', interrupted: false } },
      { type: 'TurnStarted', data: { turn_id: 'turn_2' } },
    ]);
  });

  it('records an interrupted turn', () => {
    spec.given(historyOf(...runningTurn(), Cmd.interrupt())).when(Cmd.complete('turn_1', 1, true)).then([
      { type: 'TurnCompleted', data: { turn_id: 'turn_1', interrupted: true } },
    ]);
  });

  it('is a no-op for a settled turn, another turn or a stale generation', () => {
    spec.given(historyOf(...runningTurn(), Cmd.complete('turn_1'))).when(Cmd.complete('turn_1')).thenNothingHappened();
    spec.given(historyOf(...runningTurn())).when(Cmd.complete('turn_2')).thenNothingHappened();
    spec.given(historyOf(...runningTurn())).when(Cmd.complete('turn_1', 2)).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.complete('turn_1')).thenThrows('NOT_FOUND', 404);
  });
});

describe('FailTurn', () => {
  it('reports a session.error, settles the turn with its named reason and starts the next queued message', () => {
    spec.given(historyOf(...runningTurn(), Cmd.message('turn_2'))).when(Cmd.fail('turn_1', 'model_error', 'overloaded')).then([
      { type: 'SessionErrorRaised', data: { turn_id: 'turn_1', error_type: 'model_request_failed_error', message: 'overloaded', retry_status: 'terminal' } },
      { type: 'TurnFailed', data: { turn_id: 'turn_1', reason: 'model_error', message: 'overloaded' } },
      { type: 'TurnStarted', data: { turn_id: 'turn_2' } },
    ]);
  });

  it('asks for a rebuild before starting the next turn when the sandbox is gone', () => {
    spec.given(historyOf(...runningTurn(), Cmd.message('turn_2'), Cmd.died(1))).when(Cmd.fail('turn_1', 'transcript_unrecoverable')).then([
      { type: 'SessionErrorRaised', data: { turn_id: 'turn_1', error_type: 'berth.transcript_unrecoverable_error', message: 'boom', retry_status: 'terminal' } },
      { type: 'TurnFailed', data: { turn_id: 'turn_1', reason: 'transcript_unrecoverable', message: 'boom' } },
      { type: 'SandboxRequested', data: { generation: 2, reason: 'rebuild' } },
      { type: 'TurnStarted', data: { turn_id: 'turn_2' } },
    ]);
  });

  it('is a no-op for a turn that is not current', () => {
    spec.given(historyOf(...runningTurn(), Cmd.fail('turn_1'))).when(Cmd.fail('turn_1')).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.fail('turn_1')).thenThrows('NOT_FOUND', 404);
  });
});

describe('RecoverTurn', () => {
  it('completes a transcript-pending turn from durable evidence', () => {
    spec.given(historyOf(...runningTurn(), Cmd.died(1))).when(Cmd.recoverTurn('turn_1')).then([
      { type: 'TurnRecovered', data: { turn_id: 'turn_1', method: 'transcript_recovered' } },
      { type: 'TurnCompleted', data: { turn_id: 'turn_1', interrupted: false } },
    ]);
  });

  it('is a no-op once the turn settled (two reconcilers never both win)', () => {
    spec.given(historyOf(...runningTurn(), Cmd.died(1), Cmd.recoverTurn('turn_1'))).when(Cmd.recoverTurn('turn_1', 'replayed')).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.recoverTurn('turn_1')).thenThrows('NOT_FOUND', 404);
  });
});

describe('MarkTranscriptPending', () => {
  it('hands the current turn to transcript recovery', () => {
    spec.given(historyOf(...runningTurn())).when(Cmd.transcriptPending('turn_1')).then([{ type: 'TurnTranscriptPending', data: { turn_id: 'turn_1' } }]);
  });

  it('is a no-op when already pending or for another turn', () => {
    spec.given(historyOf(...runningTurn(), Cmd.transcriptPending('turn_1'))).when(Cmd.transcriptPending('turn_1')).thenNothingHappened();
    spec.given(historyOf(...readySession())).when(Cmd.transcriptPending('turn_1')).thenNothingHappened();
  });

  it('refuses an unknown session with NOT_FOUND', () => {
    spec.given([]).when(Cmd.transcriptPending('turn_1')).thenThrows('NOT_FOUND', 404);
  });
});
