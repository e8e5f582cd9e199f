import { workflowSpec } from '@berth/core/testing';
import type { ManagerInput } from './inputs';
import { managerCommands } from './manager-commands';
import type { ManagerOutput } from './outputs';
import { sandboxManagerWorkflow } from './sandbox-manager.workflow';
import { at, boundSession, journal, SANDBOX, SESSION, startedTurn, TURN } from './testing/manager-fixtures';

const workflow = sandboxManagerWorkflow({ interruptDeadlineMs: 1_500 });
const spec = workflowSpec(workflow);

const complete = (interrupted: boolean, harness_session_id: string | null = null): ManagerOutput => ({
  kind: 'command',
  command: managerCommands.completeTurn(SESSION, { turn_id: TURN, generation: 1, interrupted, harness_session_id }),
  report: false,
});
const fail = (reason: 'model_error' | 'harness_failed' | 'sandbox_lost' | 'input_not_delivered' | 'resource_unavailable', message: string): ManagerOutput => ({
  kind: 'command',
  command: managerCommands.failTurn(SESSION, { turn_id: TURN, reason, message }),
  report: false,
});
const touch: ManagerOutput = { kind: 'lease', action: 'touch', session_id: SESSION };
const runTurn = (over: Record<string, unknown> = {}): ManagerOutput => ({
  kind: 'run_turn',
  turn: {
    session_id: SESSION,
    turn_id: TURN,
    generation: 1,
    sandbox_id: SANDBOX,
    owner_id: 'own_1',
    environment_id: 'env_1',
    agent: { id: 'agent_1', version: 2 },
    harness: 'claude-code',
    permission_mode: 'always_allow',
    prompt: 'write out.txt',
    resources: [],
    vault_ids: [],
    resume_id: null,
    may_have_started: false,
    continuation: null,
    ...over,
  },
});
const terminal = (over: Partial<{ generation: number; ok: boolean; interrupted: boolean; error: string | null; harness_session_id: string | null }> = {}): ManagerInput => ({
  kind: 'turn_terminal',
  turn_id: TURN,
  generation: 1,
  ok: true,
  interrupted: false,
  error: null,
  harness_session_id: 'h-1',
  now: at(5_000),
  ...over,
});
const exited = (over: Partial<Extract<ManagerInput, { kind: 'turn_exited' }>> = {}): ManagerInput => ({
  kind: 'turn_exited',
  turn_id: TURN,
  generation: 1,
  exit_code: 1,
  stderr: '',
  sandbox: { state: 'running' },
  harness_session_id: null,
  now: at(6_000),
  ...over,
});

/** Turn 1, delivered and running in this process. */
function runningTurn(permission: 'always_allow' | 'always_ask' = 'always_allow') {
  const { j, history } = startedTurn(permission);
  return { j, history: [...history, j.delivered(100)] };
}

describe('sandbox-manager workflow: a sandbox for the session', () => {
  it('acquires a container for the generation the kernel requested', () => {
    const j = journal();
    const history = [
      j.event('SessionCreated', { owner_id: 'own_1', agent: { id: 'agent_1', version: 1 }, environment_id: 'env_1', harness: 'codex', title: null, metadata: {}, idempotency_key: null, permission_mode: 'always_allow' }),
      j.event('SandboxRequested', { generation: 1, reason: 'startup' }),
    ];
    spec.given(history).when(j.delivered()).then([{ kind: 'acquire_sandbox', session_id: SESSION, generation: 1, owner_id: 'own_1', environment_id: 'env_1', resources: [], fork_of: null, import_workspace: null }]);
  });

  it('asks for one container however often the request is delivered', () => {
    const j = journal();
    const history = [j.event('SandboxRequested', { generation: 1, reason: 'startup' })];
    const when = spec.given(history).when(j.delivered());
    when.thenMatches([{ kind: 'acquire_sandbox', generation: 1 }]);
    expect(when.andAgain()).toEqual([]);
  });

  it('ignores a request already bound, superseded by a newer one, or for a terminated session', () => {
    const { j, history } = boundSession();
    const request = history[1];
    if (request.kind !== 'event') throw new Error('the fixture folds events');
    spec.given(history).when({ kind: 'delivered', event: request.event, maybe_acted_on: true, now: at(0) }).thenNothing();

    const k = journal();
    const superseded = [k.event('SandboxRequested', { generation: 1, reason: 'startup' })];
    const old = k.delivered();
    superseded.push(k.event('SandboxRequested', { generation: 2, reason: 'rebuild' }));
    spec.given(superseded).when(old).thenNothing();

    const terminated = [...history, j.event('SandboxRequested', { generation: 2, reason: 'rebuild' })];
    const rebuild = j.delivered();
    terminated.push(j.event('SessionTerminated', { sandbox_id: null }));
    spec.given(terminated).when(rebuild).thenNothing();
  });

  it('binds an acquired container under an id derived from session and generation, and wants the answer', () => {
    const { history } = boundSession();
    spec
      .given(history)
      .when({ kind: 'sandbox_acquired', generation: 2, sandbox_id: `berth-s-${SESSION}-g2`, warm: true, expires_at: '2026-01-01T01:00:00.000Z', lease: { idle_timeout_seconds: 3600, max_expires_at: null }, now: at(0) })
      .then([
        {
          kind: 'command',
          command: { type: 'BindSandbox', session_id: SESSION, command_id: `cmd_sm_bind_${SESSION}_g2`, data: { sandbox_id: `berth-s-${SESSION}-g2`, generation: 2, expires_at: '2026-01-01T01:00:00.000Z', warm: true, lease: { idle_timeout_seconds: 3600, max_expires_at: null } } },
          report: true,
        },
      ]);
  });

  it('reports a container that could not be started', () => {
    spec
      .given([])
      .when({ kind: 'sandbox_acquire_failed', generation: 3, message: 'image not found', now: at(0) })
      .then([{ kind: 'command', command: managerCommands.sandboxStartFailed('', 3, 'image not found'), report: false }]);
  });

  const answered = (over: Partial<Extract<ManagerInput, { kind: 'command_answered' }>> = {}): ManagerInput => ({
    kind: 'command_answered',
    command_id: `cmd_sm_bind_${SESSION}_g1`,
    command_type: 'BindSandbox',
    ok: true,
    duplicate: false,
    event_types: ['SandboxBound'],
    sandbox_id: SANDBOX,
    generation: 1,
    now: at(0),
    ...over,
  });

  it('tracks the lease of a container the kernel bound (also when the bind was a repeat)', () => {
    const { history } = boundSession();
    const track: ManagerOutput = { kind: 'lease', action: 'track', session_id: SESSION, sandbox_id: SANDBOX, generation: 1, owner_id: 'own_1', environment_id: 'env_1' };
    spec.given(history).when(answered()).then([track]);
    spec.given(history).when(answered({ duplicate: true, event_types: [] })).then([track]);
  });

  it('gives back a container the kernel refused to bind (terminated, deleted, superseded)', () => {
    spec
      .given(boundSession().history)
      .when(answered({ event_types: [] }))
      .then([{ kind: 'release_sandboxes', session_id: SESSION, sandbox_ids: [SANDBOX], whole_session: false, remove_workspace: false }]);
    spec
      .given(boundSession().history)
      .when(answered({ ok: false, event_types: [] }))
      .then([{ kind: 'release_sandboxes', session_id: SESSION, sandbox_ids: [SANDBOX], whole_session: false, remove_workspace: false }]);
  });
});

describe('sandbox-manager workflow: running a turn', () => {
  it('runs the started turn in the bound sandbox with its prompt and the session settings', () => {
    const { j, history } = startedTurn('always_ask');
    spec.given(history).when(j.delivered()).then([touch, runTurn({ permission_mode: 'always_ask' })]);
  });

  it('resumes the harness conversation of the previous turn', () => {
    const { j, history } = boundSession();
    history.push(
      j.event('HarnessSessionRecorded', { turn_id: 'turn_0', harness_session_id: 'h-42' }),
      j.event('UserMessageReceived', { turn_id: TURN, content: [{ type: 'text', text: 'write out.txt' }, { type: 'image', source: {} } as never], queued: false }),
      j.event('TurnStarted', { turn_id: TURN }),
    );
    spec.given(history).when(j.delivered()).then([touch, runTurn({ resume_id: 'h-42', prompt: 'write out.txt\n[image attachment omitted]' })]);
  });

  it('looks for a harness an earlier process started when one may have acted on the delivery', () => {
    const { j, history } = startedTurn();
    spec.given(history).when(j.delivered(0, true)).then([touch, runTurn({ may_have_started: true })]);
  });

  it('joins a turn it already runs instead of starting a second harness', () => {
    const { j, history } = runningTurn();
    spec.given(history).when(j.delivered(200, true)).thenNothing();
  });

  it('ignores a delivery for a turn that is no longer the current one', () => {
    const { j, history } = startedTurn();
    const delivery = j.delivered();
    history.push(j.event('TurnCompleted', { turn_id: TURN, interrupted: false }));
    spec.given(history).when(delivery).thenNothing();
  });

  it('gets the sandbox first when the session has none yet, then runs the turn once it is bound', () => {
    const j = journal();
    const history = [
      j.event('SessionCreated', { owner_id: 'own_1', agent: { id: 'agent_1', version: 2 }, environment_id: 'env_1', harness: 'claude-code', title: null, metadata: {}, idempotency_key: null, permission_mode: 'always_allow' }),
      j.event('SandboxRequested', { generation: 1, reason: 'startup' }),
      j.event('UserMessageReceived', { turn_id: TURN, content: [{ type: 'text', text: 'write out.txt' }], queued: false }),
      j.event('TurnStarted', { turn_id: TURN }),
    ];
    const delivery = j.delivered();
    spec.given(history).when(delivery).then([{ kind: 'acquire_sandbox', session_id: SESSION, generation: 1, owner_id: 'own_1', environment_id: 'env_1', resources: [], fork_of: null, import_workspace: null }]);
    const waiting = [...history, delivery, j.event('SandboxBound', { sandbox_id: SANDBOX, generation: 1, expires_at: null, warm: true })];
    spec
      .given(waiting)
      .when({ kind: 'command_answered', command_id: 'x', command_type: 'BindSandbox', ok: true, duplicate: false, event_types: ['SandboxBound'], sandbox_id: SANDBOX, generation: 1, now: at(0) })
      .then([{ kind: 'lease', action: 'track', session_id: SESSION, sandbox_id: SANDBOX, generation: 1, owner_id: 'own_1', environment_id: 'env_1' }, touch, runTurn()]);
  });

  it('fails the turn as sandbox_lost when the session has no sandbox and none is coming', () => {
    const { j, history } = boundSession();
    history.push(
      j.event('SandboxLost', { sandbox_id: SANDBOX, generation: 1, cause: 'die' }),
      j.event('UserMessageReceived', { turn_id: TURN, content: [{ type: 'text', text: 'hi' }], queued: false }),
      j.event('TurnStarted', { turn_id: TURN }),
    );
    spec.given(history).when(j.delivered()).then([fail('sandbox_lost', 'the session has no sandbox to run the turn in')]);
  });

  it('fails the turn as input_not_delivered when the journal has no message for it', () => {
    const { j, history } = boundSession();
    history.push(j.event('TurnStarted', { turn_id: TURN }));
    spec.given(history).when(j.delivered()).then([fail('input_not_delivered', 'the turn has no user message in the journal')]);
  });

  it('completes a turn whose interrupt was recorded before its harness ran, without running it', () => {
    const { j, history } = startedTurn();
    const delivery = j.delivered();
    history.push(j.event('InterruptRequested', { turn_id: TURN }));
    spec.given(history).when(delivery).then([complete(true)]);
  });
});

describe('sandbox-manager workflow: how a running turn ends', () => {
  it('completes the turn at its terminal line, with the harness conversation id', () => {
    spec.given(runningTurn().history).when(terminal()).then([complete(false, 'h-1')]);
  });

  it('fails the turn with model_error when the harness reports a failed turn', () => {
    spec.given(runningTurn().history).when(terminal({ ok: false, error: 'overloaded' })).then([fail('model_error', 'overloaded')]);
    spec.given(runningTurn().history).when(terminal({ ok: false, error: null })).then([fail('model_error', 'the harness reported a failed turn')]);
  });

  it('settles once: a second terminal or the exit that follows only notes lease activity', () => {
    const { history } = runningTurn();
    expect(spec.given(history).when(terminal()).andAgain()).toEqual([]);
    spec.given([...history, terminal()]).when(exited({ exit_code: 0 })).then([touch]);
  });

  it('fails the turn as harness_failed when the harness exits without its terminal line, naming code and stderr', () => {
    spec
      .given(runningTurn().history)
      .when(exited({ exit_code: 2, stderr: 'segfault' }))
      .then([touch, fail('harness_failed', 'the harness exited with code 2 without finishing the turn: segfault')]);
  });

  it('reports the sandbox death (the death watcher\u2019s command) when the container died under the harness', () => {
    const died = managerCommands.sandboxDied(SESSION, { sandbox_id: SANDBOX, generation: 1, cause: 'die', exit_code: 137 });
    expect(died.command_id).toBe(`cmd_sm_died_${SESSION}_g1`);
    spec
      .given(runningTurn().history)
      .when(exited({ exit_code: null, sandbox: { state: 'dead', sandbox_id: SANDBOX, generation: 1, cause: 'die', exit_code: 137 } }))
      .then([{ kind: 'command', command: died, report: false }]);
  });

  it('fails a turn whose harness could not be started with the reason the activity named', () => {
    spec
      .given(runningTurn().history)
      .when({ kind: 'turn_not_run', turn_id: TURN, reason: 'model_error', message: 'no model is configured', now: at(0) })
      .then([fail('model_error', 'no model is configured')]);
  });

  it('ignores results for a turn this process no longer runs', () => {
    const { history } = startedTurn();
    spec.given(history).when(terminal()).thenNothing();
    spec.given(history).when({ kind: 'turn_not_run', turn_id: TURN, reason: 'harness_failed', message: 'x', now: at(0) }).thenNothing();
  });
});

describe('sandbox-manager workflow: interrupts', () => {
  it('stops a harness it streams and gives it until the deadline', () => {
    const { j, history } = runningTurn();
    history.push(j.event('InterruptRequested', { turn_id: TURN }));
    spec
      .given(history)
      .when(j.delivered(1_000))
      .then([
        { kind: 'interrupt_harness', session_id: SESSION, turn_id: TURN, sandbox_id: SANDBOX, streamed_here: true },
        { kind: 'schedule', at: at(2_500), input: { kind: 'interrupt_deadline', turn_id: TURN, now: at(1_000) } },
      ]);
  });

  it('interrupts once however often the interrupt is delivered', () => {
    const { j, history } = runningTurn();
    history.push(j.event('InterruptRequested', { turn_id: TURN }));
    const when = spec.given(history).when(j.delivered(1_000));
    when.thenMatches([{ kind: 'interrupt_harness' }, { kind: 'schedule' }]);
    expect(when.andAgain()).toEqual([]);
  });

  it('completes the turn as interrupted when the harness stops, or at the deadline when it does not', () => {
    const { j, history } = runningTurn();
    history.push(j.event('InterruptRequested', { turn_id: TURN }), j.delivered(1_000));
    spec.given(history).when(exited({ exit_code: 130 })).then([touch, complete(true)]);
    spec.given(history).when(terminal({ interrupted: false })).then([complete(true, 'h-1')]);
    spec
      .given(history)
      .when({ kind: 'interrupt_deadline', turn_id: TURN, now: at(2_500) })
      .then([complete(true), { kind: 'abandon_turn', session_id: SESSION, turn_id: TURN }]);
    spec.given([...history, terminal()]).when({ kind: 'interrupt_deadline', turn_id: TURN, now: at(2_500) }).thenNothing();
  });

  it('ends at once a turn waiting behind the turns ahead of it (or started by an earlier process), and never starts it later', () => {
    const { j, history } = startedTurn();
    const turnDelivery = j.delivered();
    history.push(j.event('InterruptRequested', { turn_id: TURN }));
    const interrupt = j.delivered(1_000);
    spec
      .given(history)
      .when(interrupt)
      .then([{ kind: 'interrupt_harness', session_id: SESSION, turn_id: TURN, sandbox_id: SANDBOX, streamed_here: false }, complete(true)]);
    spec.given([...history, interrupt]).when(turnDelivery).thenNothing();
  });

  it('ignores an interrupt of another turn', () => {
    const { j, history } = runningTurn();
    history.push(j.event('InterruptRequested', { turn_id: 'turn_other' }));
    spec.given(history).when(j.delivered(1_000)).thenNothing();
  });
});

describe('sandbox-manager workflow: tool confirmations', () => {
  /** Turn 1 asked before running tool toolu_1, recorded as agent.tool_use event `askId`. */
  function askingTurn(running: boolean) {
    const { j, history } = startedTurn('always_ask');
    if (running) history.push(j.delivered(100));
    history.push(
      j.event('AgentToolUseRecorded', { turn_id: TURN, offset: 0, harness_tool_use_id: 'toolu_1', name: 'Bash', input: { command: 'ls' }, evaluated_permission: 'ask' }),
    );
    const askId = j.lastId();
    history.push(j.event('TurnAwaitingConfirmation', { turn_id: TURN, event_ids: [askId] }));
    return { j, history, askId };
  }
  const answer = (result: 'allow' | 'deny', deny_message: string | null = null): ManagerOutput => ({
    kind: 'answer_confirmation',
    session_id: SESSION,
    turn_id: TURN,
    sandbox_id: SANDBOX,
    harness: 'claude-code',
    permission_mode: 'always_ask',
    harness_tool_use_id: 'toolu_1',
    result,
    deny_message,
  });

  it('answers the harness request of the confirmed tool use with the user decision', () => {
    const { j, history, askId } = askingTurn(true);
    history.push(j.event('ToolUseConfirmed', { turn_id: TURN, tool_use_event_id: askId, result: 'deny', deny_message: 'not that' }));
    spec.given(history).when(j.delivered(2_000)).then([answer('deny', 'not that')]);
  });

  it('after a restart of this manager, answers the waiting harness and follows the rest of its turn', () => {
    const { j, history, askId } = askingTurn(false);
    history.push(j.event('ToolUseConfirmed', { turn_id: TURN, tool_use_event_id: askId, result: 'allow', deny_message: null }));
    spec.given(history).when(j.delivered(2_000)).then([answer('allow'), touch, runTurn({ permission_mode: 'always_ask', may_have_started: true })]);
  });

  describe('a turn paused while it waited (its harness went with the sandbox)', () => {
    const carried = { harness_tool_use_id: 'toolu_1', call: { name: 'Bash', mcp_server_name: null, input: { command: 'ls' } }, result: 'allow' as const, deny_message: null };
    const G2 = `berth-s-${SESSION}-g2`;
    function pausedWhileAsking() {
      const { j, history, askId } = askingTurn(true);
      history.push(j.event('SessionPaused', { sandbox_id: SANDBOX, turn_id: TURN }), j.delivered(1_000));
      return { j, history, askId };
    }

    it('the answer waits for TurnResumed; then a new harness continues the turn on the resumed sandbox, told the answer, carrying it', () => {
      const { j, history, askId } = pausedWhileAsking();
      history.push(j.event('SessionResumed', {}), j.event('SandboxRequested', { generation: 2, reason: 'rebuild' }), j.event('SandboxBound', { sandbox_id: G2, generation: 2, expires_at: null, warm: false }));
      history.push(j.event('ToolUseConfirmed', { turn_id: TURN, tool_use_event_id: askId, result: 'allow', deny_message: null }));
      spec.given(history).when(j.delivered(2_000)).thenNothing();
      history.push(j.event('TurnResumed', { turn_id: TURN }));
      const outputs = workflow.decide(j.delivered(2_100), history.reduce((state, input) => workflow.evolve(state, input), workflow.initialState()));
      expect(outputs).toEqual([
        touch,
        runTurn({
          generation: 2,
          sandbox_id: G2,
          permission_mode: 'always_ask',
          continuation: { decisions: [carried], resumed_at: j.lastSeq() },
          prompt: expect.stringContaining('approved: Bash {"command":"ls"}. Make this call again now, exactly as before.'),
        }),
      ]);
    });

    it('an answer that resumed the paused session: the continuation waits for the new sandbox, then runs on it', () => {
      const { j, history, askId } = pausedWhileAsking();
      history.push(
        j.event('SessionResumed', {}),
        j.event('SandboxRequested', { generation: 2, reason: 'rebuild' }),
        j.event('ToolUseConfirmed', { turn_id: TURN, tool_use_event_id: askId, result: 'deny', deny_message: 'no' }),
        j.event('TurnResumed', { turn_id: TURN }),
      );
      spec.given(history).when(j.delivered(2_000)).then([{ kind: 'acquire_sandbox', session_id: SESSION, generation: 2, owner_id: 'own_1', environment_id: 'env_1', resources: [], fork_of: null, import_workspace: null }]);
      const waiting = [...history, j.delivered(2_000), j.event('SandboxBound', { sandbox_id: G2, generation: 2, expires_at: null, warm: false })];
      const bound: ManagerInput = { kind: 'command_answered', command_id: 'x', command_type: 'BindSandbox', ok: true, duplicate: false, event_types: ['SandboxBound'], sandbox_id: G2, generation: 2, now: at(3_000) };
      const outputs = workflow.decide(bound, waiting.reduce((state, input) => workflow.evolve(state, input), workflow.initialState()));
      expect(outputs.map((o) => o.kind)).toEqual(['lease', 'lease', 'run_turn']);
      expect(outputs.at(-1)).toMatchObject({ turn: { sandbox_id: G2, continuation: { decisions: [{ ...carried, result: 'deny', deny_message: 'no' }] } } });
      expect(JSON.stringify(outputs.at(-1))).toContain('denied: Bash');
    });

    /** Paused while asking, answered, and continued by a new harness on G2 that this process no longer runs (it was restarted). */
    function continuedElsewhere() {
      const { j, history, askId } = pausedWhileAsking();
      history.push(
        j.event('SessionResumed', {}),
        j.event('SandboxRequested', { generation: 2, reason: 'rebuild' }),
        j.event('SandboxBound', { sandbox_id: G2, generation: 2, expires_at: null, warm: false }),
        j.event('ToolUseConfirmed', { turn_id: TURN, tool_use_event_id: askId, result: 'allow', deny_message: null }),
      );
      const confirmedSeq = j.lastSeq();
      history.push(j.event('TurnResumed', { turn_id: TURN }));
      return { j, history, confirmedSeq, resumedAt: j.lastSeq() };
    }
    const restarted = (history: readonly ManagerInput[]) => history.filter((input) => input.kind === 'event');

    it('a restarted manager follows the continuing harness as a continuation: the carried answers, and where its outputs are numbered from', () => {
      const { j, history, resumedAt } = continuedElsewhere();
      const turnStarted = history.find((input) => input.kind === 'event' && input.event.type === 'TurnStarted');
      if (turnStarted?.kind !== 'event') throw new Error('no TurnStarted');
      const redelivered: ManagerInput = { kind: 'delivered', event: turnStarted.event, maybe_acted_on: true, now: at(3_000) };
      spec.given(restarted(history)).when(redelivered).then([
        touch,
        runTurn({ generation: 2, sandbox_id: G2, permission_mode: 'always_ask', may_have_started: true, continuation: { decisions: [carried], resumed_at: resumedAt }, prompt: expect.stringContaining('approved: Bash') }),
      ]);
      expect(j.lastSeq()).toBe(resumedAt);
    });

    it('the continuing harness is not released: its own confirmation, answered after a restart, is answered and followed', () => {
      const { j, history, resumedAt } = continuedElsewhere();
      history.push(
        j.event('AgentToolUseRecorded', { turn_id: TURN, offset: 3, harness_tool_use_id: 'toolu_2', name: 'bash', input: { command: 'pwd' }, evaluated_permission: 'ask' }),
      );
      const askId = j.lastId();
      history.push(
        j.event('TurnAwaitingConfirmation', { turn_id: TURN, event_ids: [askId] }),
        j.event('ToolUseConfirmed', { turn_id: TURN, tool_use_event_id: askId, result: 'allow', deny_message: null }),
      );
      spec.given(restarted(history)).when(j.delivered(4_000, true)).then([
        { ...(answer('allow') as Extract<ManagerOutput, { kind: 'answer_confirmation' }>), sandbox_id: G2, harness_tool_use_id: 'toolu_2' },
        touch,
        runTurn({ generation: 2, sandbox_id: G2, permission_mode: 'always_ask', may_have_started: true, continuation: { decisions: [carried, { harness_tool_use_id: 'toolu_2', call: { name: 'bash', mcp_server_name: null, input: { command: 'pwd' } }, result: 'allow', deny_message: null }], resumed_at: resumedAt }, prompt: expect.any(String) }),
      ]);
    });

    it('the released harness’s confirmation, delivered again after the turn went on in a new harness, changes nothing', () => {
      const { history, confirmedSeq } = continuedElsewhere();
      const confirmed = history.find((input) => input.kind === 'event' && input.event.seq === confirmedSeq);
      if (confirmed?.kind !== 'event') throw new Error('no ToolUseConfirmed');
      spec.given(restarted(history)).when({ kind: 'delivered', event: confirmed.event, maybe_acted_on: true, now: at(3_000) }).thenNothing();
    });

    it('the released harness’s exit, reported after the continuing one started here, is not the turn’s', () => {
      const { j, history } = continuedElsewhere();
      history.push(j.delivered(2_100));
      spec.given(history).when(exited({ generation: 1, exit_code: 137, sandbox: { state: 'dead', sandbox_id: SANDBOX, generation: 1, cause: 'destroy', exit_code: 137 } })).then([touch]);
      spec.given(history).when(terminal({ generation: 1, ok: false, error: 'killed' })).thenNothing();
    });

    it('a turn that was not paused while waiting resumes in its own harness (no continuation)', () => {
      const { j, history, askId } = askingTurn(true);
      history.push(j.event('ToolUseConfirmed', { turn_id: TURN, tool_use_event_id: askId, result: 'allow', deny_message: null }), j.delivered(2_000));
      history.push(j.event('TurnResumed', { turn_id: TURN }));
      spec.given(history).when(j.delivered(2_100)).thenNothing();
    });
  });

  it('ignores a confirmation of a tool use that never asked or of another turn', () => {
    const { j, history } = askingTurn(true);
    history.push(j.event('ToolUseConfirmed', { turn_id: TURN, tool_use_event_id: 'sevt_unknown', result: 'allow', deny_message: null }));
    spec.given(history).when(j.delivered(2_000)).thenNothing();
  });
});

describe('sandbox-manager workflow: custom tool results', () => {
  /** Turn 1's harness called the custom tool get_weather (harness id toolu_c), recorded as `useId`; the turn waits on it. */
  function callingTurn(running: boolean) {
    const { j, history } = startedTurn();
    if (running) history.push(j.delivered(100));
    history.push(j.event('AgentCustomToolUseRecorded', { turn_id: TURN, offset: 0, harness_tool_use_id: 'toolu_c', name: 'get_weather', input: { city: 'Oslo' } }));
    const useId = j.lastId();
    history.push(j.event('TurnAwaitingConfirmation', { turn_id: TURN, event_ids: [useId] }));
    const result = (turn_id = TURN, id = useId) =>
      j.event('CustomToolResultReceived', { turn_id, custom_tool_use_event_id: id, harness_tool_use_id: 'toolu_c', content: [{ type: 'text', text: 'sunny' }], is_error: false });
    return { j, history, result };
  }
  const answered: ManagerOutput = { kind: 'custom_tool_answered', session_id: SESSION, turn_id: TURN, sandbox_id: SANDBOX };

  it('hands the result to the call that waits in the sandbox (through its tools socket)', () => {
    const { j, history, result } = callingTurn(true);
    history.push(result());
    spec.given(history).when(j.delivered(2_000)).then([answered]);
  });

  it('after a restart of this manager, answers the waiting call and follows the rest of the turn', () => {
    const { j, history, result } = callingTurn(false);
    history.push(result());
    spec.given(history).when(j.delivered(2_000)).then([answered, touch, runTurn({ may_have_started: true })]);
  });

  it('ignores a result for another turn, and one for a turn being interrupted (the interrupt ends the wait)', () => {
    const other = callingTurn(true);
    other.history.push(other.result('turn_other'));
    spec.given(other.history).when(other.j.delivered(2_000)).thenNothing();
    const interrupted = callingTurn(true);
    interrupted.history.push(interrupted.j.event('InterruptRequested', { turn_id: TURN }), interrupted.result());
    spec.given(interrupted.history).when(interrupted.j.delivered(2_000)).thenNothing();
  });
});

describe('sandbox-manager workflow: terminate, archive, delete, lost sandboxes', () => {
  it('terminate stops following the turn and releases every container of the session', () => {
    const { j, history } = runningTurn();
    history.push(j.event('TurnFailed', { turn_id: TURN, reason: 'sandbox_lost', message: 'the session was terminated' }), j.event('SessionTerminated', { sandbox_id: SANDBOX }));
    spec
      .given(history)
      .when(j.delivered(3_000))
      .then([
        { kind: 'abandon_turn', session_id: SESSION, turn_id: TURN },
        { kind: 'lease', action: 'forget', session_id: SESSION, sandbox_id: null },
        { kind: 'release_sandboxes', session_id: SESSION, sandbox_ids: [SANDBOX], whole_session: true, remove_workspace: false },
      ]);
  });

  it('delete and archive release the session containers too; only delete then removes its workspace', () => {
    for (const type of ['SessionDeleted', 'SessionArchived'] as const) {
      const { j, history } = boundSession();
      history.push(j.event(type, {}));
      spec
        .given(history)
        .when(j.delivered())
        .then([
          { kind: 'lease', action: 'forget', session_id: SESSION, sandbox_id: null },
          { kind: 'release_sandboxes', session_id: SESSION, sandbox_ids: [], whole_session: true, remove_workspace: type === 'SessionDeleted' },
        ]);
    }
  });

  it('pause releases every container of the session', () => {
    const { j, history } = boundSession();
    history.push(j.event('SessionPaused', { sandbox_id: SANDBOX }));
    spec
      .given(history)
      .when(j.delivered())
      .then([
        { kind: 'lease', action: 'forget', session_id: SESSION, sandbox_id: null },
        { kind: 'release_sandboxes', session_id: SESSION, sandbox_ids: [SANDBOX], whole_session: true, remove_workspace: false },
      ]);
  });

  it('a pause delivered after the session resumed releases only the sandbox it named, never the new one', () => {
    const { j, history } = boundSession();
    history.push(j.event('SessionPaused', { sandbox_id: SANDBOX }));
    const pause = j.delivered();
    const g2 = 'berth-s-sesn_a-g2';
    history.push(j.event('SessionResumed', {}), j.event('SandboxRequested', { generation: 2, reason: 'rebuild' }), j.event('SandboxBound', { sandbox_id: g2, generation: 2, expires_at: null, warm: false }));
    spec
      .given(history)
      .when(pause)
      .then([
        { kind: 'lease', action: 'forget', session_id: SESSION, sandbox_id: SANDBOX },
        { kind: 'release_sandboxes', session_id: SESSION, sandbox_ids: [SANDBOX], whole_session: false, remove_workspace: false },
      ]);
  });

  it('a terminate delivered after the session was recovered releases only the sandbox it named, never the new one', () => {
    const { j, history } = boundSession();
    history.push(j.event('SessionTerminated', { sandbox_id: SANDBOX }));
    const terminate = j.delivered();
    const g2 = 'berth-s-sesn_a-g2';
    history.push(
      j.event('SessionRecovered', { outcome: 'startup-requested', reason: 'sandbox_missing', policy: 'auto' }),
      j.event('SandboxRequested', { generation: 2, reason: 'recover' }),
      j.event('SandboxBound', { sandbox_id: g2, generation: 2, expires_at: null, warm: false }),
    );
    spec
      .given(history)
      .when(terminate)
      .then([
        { kind: 'lease', action: 'forget', session_id: SESSION, sandbox_id: SANDBOX },
        { kind: 'release_sandboxes', session_id: SESSION, sandbox_ids: [SANDBOX], whole_session: false, remove_workspace: false },
      ]);
  });

  it('forgets the lease of a lost sandbox', () => {
    const { j, history } = boundSession();
    history.push(j.event('SandboxLost', { sandbox_id: SANDBOX, generation: 1, cause: 'oom' }));
    spec.given(history).when(j.delivered()).then([{ kind: 'lease', action: 'forget', session_id: SESSION, sandbox_id: SANDBOX }]);
  });
});

describe('sandbox-manager workflow: the reconciler asks to reattach', () => {
  const reattach = (generation = 1): ManagerInput => ({ kind: 'reattach_requested', turn_id: TURN, generation, now: at(0) });

  it('follows the current turn of that generation', () => {
    spec.given(startedTurn().history).when(reattach()).then([touch, runTurn({ may_have_started: true }), { kind: 'reply', outcome: 'done', message: 'reattached' }]);
  });

  it('says so when it already streams the turn, and refuses another generation', () => {
    spec.given(runningTurn().history).when(reattach()).then([{ kind: 'reply', outcome: 'done', message: 'the turn is already streamed by this manager' }]);
    spec.given(startedTurn().history).when(reattach(2)).then([{ kind: 'reply', outcome: 'impossible', message: 'the turn is not current on this sandbox generation' }]);
  });
});

describe('manager command ids', () => {
  it('are readable when they fit a token and hashed (never cut) when they do not', () => {
    const long = `sesn_${'x'.repeat(120)}`;
    const a = managerCommands.agentOutput(long, { turn_id: `turn_${'y'.repeat(120)}`, generation: 1, offset: 0, outputs: [{ kind: 'thinking' }], harness_session_id: null });
    const b = managerCommands.agentOutput(long, { turn_id: `turn_${'y'.repeat(120)}`, generation: 1, offset: 1, outputs: [{ kind: 'thinking' }], harness_session_id: null });
    expect(a.command_id).toMatch(/^cmd_sm_h[0-9a-f]{16}$/);
    expect(a.command_id).not.toBe(b.command_id);
    expect(managerCommands.completeTurn('sesn_1', { turn_id: 'turn_1', generation: 1, interrupted: true, harness_session_id: null }).command_id).toBe('cmd_sm_done_sesn_1_turn_1');
  });
});

describe('sandbox-manager workflow: session resources', () => {
  const resource = { type: 'file', id: 'sesrsc_1', file_id: 'file_1', mount_path: '/mnt/session/uploads/a.txt', created_at: at(0), updated_at: at(0) } as const;

  it('mounts a resource added while the bound sandbox idles', () => {
    const { j, history } = boundSession();
    history.push(j.event('SessionResourceAdded', { resource }));
    spec
      .given(history)
      .when(j.delivered())
      .then([{ kind: 'mount_resources', session_id: SESSION, owner_id: 'own_1', sandbox_id: SANDBOX, resources: [resource] }]);
  });

  it('leaves a resource added while a turn runs here to the next turn, which runs with it', () => {
    const { j, history } = runningTurn();
    history.push(j.event('SessionResourceAdded', { resource }));
    spec.given(history).when(j.delivered()).then([]);
  });

  it('mounts nothing without a sandbox; the sandbox acquired later gets every resource the session has', () => {
    const j = journal();
    const history = [
      j.event('SessionCreated', { owner_id: 'own_1', agent: { id: 'agent_1', version: 1 }, environment_id: 'env_1', harness: 'codex', title: null, metadata: {}, idempotency_key: null, permission_mode: 'always_allow' }),
      j.event('SessionResourceAdded', { resource }),
    ];
    spec.given(history).when(j.delivered()).then([]);
    history.push(j.event('SandboxRequested', { generation: 1, reason: 'startup' }));
    spec.given(history).when(j.delivered()).then([{ kind: 'acquire_sandbox', session_id: SESSION, generation: 1, owner_id: 'own_1', environment_id: 'env_1', resources: [resource], fork_of: null, import_workspace: null }]);
  });

  it('mounts nothing into a paused session; its resume acquires a sandbox with the resource', () => {
    const { j, history } = boundSession();
    history.push(j.event('SessionPaused', { sandbox_id: SANDBOX }), j.event('SessionResourceAdded', { resource }));
    spec.given(history).when(j.delivered()).then([]);
    history.push(j.event('SessionResumed', {}), j.event('SandboxRequested', { generation: 2, reason: 'rebuild' }));
    spec.given(history).when(j.delivered()).then([{ kind: 'acquire_sandbox', session_id: SESSION, generation: 2, owner_id: 'own_1', environment_id: 'env_1', resources: [resource], fork_of: null, import_workspace: null }]);
  });

  it('a removed resource is no longer mounted in new sandboxes', () => {
    const { j, history } = boundSession();
    history.push(
      j.event('SessionResourceAdded', { resource }),
      j.event('SessionResourceRemoved', { resource_id: resource.id }),
      j.event('UserMessageReceived', { turn_id: TURN, content: [{ type: 'text', text: 'write out.txt' }], queued: false }),
      j.event('TurnStarted', { turn_id: TURN }),
    );
    spec.given(history).when(j.delivered(100)).then([touch, runTurn()]);
  });

  it('fails the turn when a resource cannot be mounted before its harness starts', () => {
    const { history } = runningTurn();
    spec
      .given(history)
      .when({ kind: 'turn_not_run', turn_id: TURN, reason: 'resource_unavailable', message: 'file file_1 no longer exists', now: at(200) })
      .then([fail('resource_unavailable', 'file file_1 no longer exists')]);
  });
});
