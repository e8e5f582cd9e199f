import { DeciderSpec } from '@berth/core/testing';
import type { RecordedEvent } from '@berth/contracts';
import { sessionDecider } from '../decide';
import { forkPointOf } from './fork';
import { deriveSessionView } from '../read/session-view';
import { checkpoint, Cmd, historyOf, Out, readySession, stateOf } from '../testing/builders';

const spec = DeciderSpec.for(sessionDecider);

/** Turn `turn_<n>`: its message, an output naming harness session hs_1, and a completion with a checkpoint of `n * 100` transcript bytes (null: none). */
const turn = (n: number, cp: (ReturnType<typeof checkpoint> & { workspace_unsupported?: true }) | null = checkpoint(n * 100)) => [
  Cmd.message(`turn_${n}`, `change ${n}`),
  Cmd.output(`turn_${n}`, 0, [Out.message(`did ${n}`)], 1, 'hs_1'),
  Cmd.complete(`turn_${n}`, 1, false, 'hs_1', cp ?? undefined),
];
const threeTurns = () => [...readySession(), ...turn(1), ...turn(2), ...turn(3)];
const messageOf = (history: readonly RecordedEvent[], turnId: string): RecordedEvent => {
  const found = history.find((e) => e.type === 'UserMessageReceived' && e.data.turn_id === turnId);
  if (found === undefined) throw new Error(`no user.message for ${turnId}`);
  return found;
};

describe('CompleteTurn with a checkpoint', () => {
  it('records berth.turn_checkpointed before the turn completes, and the turn becomes a fork point', () => {
    const history = historyOf(...readySession(), Cmd.message('turn_1'), Cmd.output('turn_1', 0, [Out.message('x')], 1, 'hs_1'));
    spec
      .given(history)
      .when(Cmd.complete('turn_1', 1, false, 'hs_1', checkpoint(100)))
      .then([
        { type: 'TurnCheckpointed', data: { turn_id: 'turn_1', message_event_id: messageOf(history, 'turn_1').id, ...checkpoint(100) } },
        { type: 'TurnCompleted', data: { turn_id: 'turn_1', interrupted: false } },
      ]);
    const commands = [...readySession(), ...turn(1)];
    const state = stateOf(...commands);
    const message = messageOf(historyOf(...commands), 'turn_1');
    expect(state.fork_points).toEqual([
      { turn_id: 'turn_1', message: { event_id: message.id, seq: message.seq }, status: 'COMPLETED', harness_session_id: 'hs_1', checkpoint: { transcript: checkpoint(100).transcript, workspace: { bytes: 1024, files: 1 } } },
    ]);
    expect(state.turn_messages).toEqual({});
  });

  it('a snapshot dropped by retention leaves its turn without a workspace', () => {
    const state = stateOf(...readySession(), ...turn(1), ...turn(2, checkpoint(200, { bytes: 5, files: 1 }, ['turn_1'])));
    expect(state.fork_points.map((p) => [p.turn_id, p.checkpoint?.workspace ?? null])).toEqual([
      ['turn_1', null],
      ['turn_2', { bytes: 5, files: 1 }],
    ]);
  });
});

describe('ForkSession', () => {
  it('by event id: records which session continues from that turn, with the transcript cut and harness conversation of its end', () => {
    const history = historyOf(...threeTurns());
    const message = messageOf(history, 'turn_2');
    spec
      .given(history)
      .when(Cmd.fork('sesn_fork', { event_id: message.id }))
      .then([
        {
          type: 'ForkCreated',
          data: { fork_session_id: 'sesn_fork', turn_id: 'turn_2', event_id: message.id, seq: message.seq, harness_session_id: 'hs_1', transcript: checkpoint(200).transcript },
        },
      ]);
  });

  it('by seq names the same turn; with neither, the latest completed turn', () => {
    const history = historyOf(...threeTurns());
    const message = messageOf(history, 'turn_2');
    spec.given(history).when(Cmd.fork('sesn_fork', { seq: message.seq })).thenMatches([{ type: 'ForkCreated', data: { turn_id: 'turn_2', seq: message.seq } }] as never);
    spec.given(history).when(Cmd.fork('sesn_fork')).thenMatches([{ type: 'ForkCreated', data: { turn_id: 'turn_3' } }] as never);
  });

  it('a turn still running (or queued) is 409 FORK_TURN_RUNNING', () => {
    const running = historyOf(...threeTurns(), Cmd.message('turn_4'), Cmd.message('turn_5'));
    for (const turnId of ['turn_4', 'turn_5']) {
      spec.given(running).when(Cmd.fork('sesn_fork', { event_id: messageOf(running, turnId).id })).thenThrows('FORK_TURN_RUNNING', 409);
    }
    // An earlier turn stays forkable while a later one runs.
    spec.given(running).when(Cmd.fork('sesn_fork', { event_id: messageOf(running, 'turn_2').id })).thenMatches([{ type: 'ForkCreated', data: { turn_id: 'turn_2' } }] as never);
    spec.given(historyOf(...readySession(), Cmd.message('turn_1'))).when(Cmd.fork('sesn_fork')).thenThrows('FORK_TURN_RUNNING', 409);
  });

  it('an id or seq that is no user.message of the session is 400 FORK_EVENT_UNKNOWN', () => {
    const history = historyOf(...threeTurns());
    const notAMessage = history.find((e) => e.type === 'AgentMessageRecorded') as RecordedEvent;
    spec.given(history).when(Cmd.fork('sesn_fork', { event_id: 'sevt_nope_0' })).thenThrows('FORK_EVENT_UNKNOWN', 400);
    spec.given(history).when(Cmd.fork('sesn_fork', { event_id: notAMessage.id })).thenThrows('FORK_EVENT_UNKNOWN', 400);
    spec.given(history).when(Cmd.fork('sesn_fork', { seq: notAMessage.seq })).thenThrows('FORK_EVENT_UNKNOWN', 400);
  });

  it('a failed turn, one without a checkpoint, or one whose snapshot is gone is 409 FORK_POINT_UNAVAILABLE', () => {
    const failed = historyOf(...readySession(), Cmd.message('turn_1'), Cmd.fail('turn_1'));
    spec.given(failed).when(Cmd.fork('sesn_fork', { event_id: messageOf(failed, 'turn_1').id })).thenThrows('FORK_POINT_UNAVAILABLE', 409);
    spec.given(failed).when(Cmd.fork('sesn_fork')).thenThrows('FORK_POINT_UNAVAILABLE', 409);
    const noCheckpoint = historyOf(...readySession(), ...turn(1, null));
    spec.given(noCheckpoint).when(Cmd.fork('sesn_fork')).thenThrows('FORK_POINT_UNAVAILABLE', 409);
    const noSnapshot = historyOf(...readySession(), ...turn(1, checkpoint(100, null)));
    spec.given(noSnapshot).when(Cmd.fork('sesn_fork')).thenThrows('FORK_POINT_UNAVAILABLE', 409);
    const dropped = historyOf(...readySession(), ...turn(1), ...turn(2, checkpoint(200, { bytes: 1, files: 1 }, ['turn_1'])));
    spec.given(dropped).when(Cmd.fork('sesn_fork', { event_id: messageOf(dropped, 'turn_1').id })).thenThrows('FORK_POINT_UNAVAILABLE', 409);
  });

  it('a turn whose manager takes no snapshots at all (volume workspaces) is 409 FORK_WORKSPACE_UNSUPPORTED, saying why', () => {
    const volume = historyOf(...readySession(), ...turn(1, { ...checkpoint(100, null), workspace_unsupported: true }));
    spec.given(volume).when(Cmd.fork('sesn_fork')).thenThrows('FORK_WORKSPACE_UNSUPPORTED', 409);
    const state = stateOf(...readySession(), ...turn(1, { ...checkpoint(100, null), workspace_unsupported: true }));
    expect(state.fork_points[0]?.checkpoint).toMatchObject({ workspace: null, workspace_unsupported: true });
    expect(() => forkPointOf(state, { event_id: null, seq: null })).toThrow(/volume workspaces, BERTH_WORKSPACE_STORAGE=volume, or the Kubernetes runtime\); forking needs loop workspaces/);
  });

  it('refuses an unknown or deleted session; a terminated one can still be forked', () => {
    spec.given([]).when(Cmd.fork('sesn_fork')).thenThrows('NOT_FOUND', 404);
    spec.given(historyOf(...threeTurns(), Cmd.delete())).when(Cmd.fork('sesn_fork')).thenThrows('AGENT_RUNTIME_ERROR', 409);
    spec.given(historyOf(...threeTurns(), Cmd.terminate())).when(Cmd.fork('sesn_fork')).thenMatches([{ type: 'ForkCreated', data: { turn_id: 'turn_3' } }] as never);
  });
});

describe('CreateSession of a fork', () => {
  const origin = { session_id: 'sesn_src', turn_id: 'turn_2', event_id: 'sevt_x_0', seq: 7, harness_session_id: 'hs_1' };

  it('records berth.session_forked before the sandbox request, and resumes the harness conversation of the origin', () => {
    spec
      .given([])
      .when(Cmd.create({ fork: origin }))
      .thenMatches([{ type: 'SessionCreated' }, { type: 'SessionForked', data: { from: origin } }, { type: 'SandboxRequested', data: { generation: 1, reason: 'startup' } }] as never);
    const state = stateOf(Cmd.create({ fork: origin }));
    expect(state).toMatchObject({ forked_from: origin, harness_session_id: 'hs_1' });
    expect(deriveSessionView(state).harness.session_id).toBe('hs_1');
  });

  it('a plain create records no fork', () => {
    expect(historyOf(Cmd.create()).map((e) => e.type)).not.toContain('SessionForked');
    expect(stateOf(Cmd.create()).forked_from).toBeNull();
  });
});
