import { toPublicEvent, type RecordedEvent } from '@berth/contracts';
import { checkInvariants, type AckedCommand, type ContainerView, type ExpectedOutput, type InvariantInput, type TurnExpectation, type TurnOutcome } from './invariants';

const S = 'sesn_a';
let clock = 0;

function ev(seq: number, type: string, data: Record<string, unknown>, commandId: string, index = 0, sessionId = S): RecordedEvent {
  clock++;
  return {
    type,
    data,
    id: `sevt_${commandId}_${index}`,
    session_id: sessionId,
    seq,
    schema_version: 1,
    command_id: commandId,
    occurred_at: new Date(Date.UTC(2026, 0, 1, 0, 0, clock)).toISOString(),
  } as unknown as RecordedEvent;
}

/** A session whose one turn ran and completed: created, sandbox bound, message, start, output, done. */
function healthyJournal(sessionId = S, sandbox = `berth-s-${S}-g1`): RecordedEvent[] {
  const content = [{ type: 'text', text: 'hi' }];
  return [
    ev(1, 'SandboxRequested', { generation: 1, reason: 'startup' }, 'create', 0, sessionId),
    ev(2, 'SandboxBound', { sandbox_id: sandbox, generation: 1, expires_at: null, warm: false }, 'bind', 0, sessionId),
    ev(3, 'UserMessageReceived', { turn_id: 'turn_1', content, queued: false }, 'msg1', 0, sessionId),
    ev(4, 'TurnStarted', { turn_id: 'turn_1' }, 'msg1', 1, sessionId),
    ev(5, 'AgentMessageRecorded', { turn_id: 'turn_1', content, offset: 0 }, 'out1', 0, sessionId),
    ev(6, 'TurnCompleted', { turn_id: 'turn_1', interrupted: false }, 'done1', 0, sessionId),
  ];
}

const seenAll = (events: readonly RecordedEvent[]) => events.map((e) => ({ seq: e.seq, data: JSON.parse(JSON.stringify(toPublicEvent(e))) }));

function input(events: RecordedEvent[], overrides: Partial<InvariantInput> = {}): InvariantInput {
  const acked: AckedCommand[] = [{ sessionId: S, label: 'user.message', eventId: 'sevt_msg1_0' }];
  return {
    journals: new Map([[S, events]]),
    acked,
    sse: new Map([[S, seenAll(events)]]),
    containers: [{ name: `/berth-s-${S}-g1`, labels: { 'berth.session': S, 'berth.managed': 'true' } }],
    ...overrides,
  };
}

describe('chaos invariants', () => {
  it('passes a healthy journal whose client saw everything once', () => {
    expect(checkInvariants(input(healthyJournal()))).toEqual({ violations: [], lost: 0, duplicated: 0, turns: 1 });
  });

  it('tolerates frames seen twice across a reconnect (dedup by id)', () => {
    const events = healthyJournal();
    const frames = [...seenAll(events).slice(0, 4), ...seenAll(events).slice(2)];
    expect(checkInvariants(input(events, { sse: new Map([[S, frames]]) })).violations).toEqual([]);
  });

  it('counts an acknowledged message missing from the journal as lost', () => {
    const events = healthyJournal().filter((e) => e.type !== 'UserMessageReceived').map((e, i) => ({ ...e, seq: i + 1 }));
    const report = checkInvariants(input(events));
    expect(report.lost).toBe(1);
    expect(report.violations.join('\n')).toContain('acknowledged user.message (sevt_msg1_0) left nothing in the journal');
  });

  it('accepts a command the kernel answered as a duplicate (a recorded no-op)', () => {
    const acked: AckedCommand[] = [{ sessionId: S, label: 'redelivered SubmitUserMessage', commandId: 'cmd_again', noopAllowed: true }];
    expect(checkInvariants(input(healthyJournal(), { acked })).violations).toEqual([]);
  });

  it('counts an event applied twice as duplicated', () => {
    const events = healthyJournal();
    const twice = [...events.slice(0, 5), { ...events[4], seq: 6 }, { ...events[5], seq: 7 }];
    const report = checkInvariants(input(twice));
    expect(report.duplicated).toBe(1);
    expect(report.violations.join('\n')).toContain('event sevt_out1_0 recorded 2 times (seqs 5, 6)');
  });

  it('reports a gap in the per-session sequence', () => {
    const events = healthyJournal().map((e) => (e.seq >= 4 ? { ...e, seq: e.seq + 1 } : e));
    const report = checkInvariants(input(events));
    expect(report.violations.join('\n')).toContain('sequence is not gap-free from 1 (position 4 holds seq 5)');
  });

  it('reports a turn left without a terminal event', () => {
    const events = healthyJournal().slice(0, 5);
    expect(checkInvariants(input(events)).violations).toEqual([`${S}: turn turn_1 never ended (no completed, failed or recovered event)`]);
  });

  it('accepts a turn failed with a named reason, and refuses one without a message', () => {
    const failed = [...healthyJournal().slice(0, 5), ev(6, 'TurnFailed', { turn_id: 'turn_1', reason: 'sandbox_lost', message: 'the sandbox is gone' }, 'rc')];
    expect(checkInvariants(input(failed)).violations).toEqual([]);
    const silent = [...healthyJournal().slice(0, 5), ev(6, 'TurnFailed', { turn_id: 'turn_1', reason: 'sandbox_lost', message: '' }, 'rc')];
    expect(checkInvariants(input(silent)).violations).toContain(`${S}: turn turn_1 failed without a named reason and message`);
  });

  it('counts a recovered turn as settled', () => {
    const recovered = [...healthyJournal().slice(0, 5), ev(6, 'TurnRecovered', { turn_id: 'turn_1', method: 'transcript_recovered' }, 'rc')];
    expect(checkInvariants(input(recovered)).violations).toEqual([]);
  });

  it('reports an event the SSE client missed, one it saw that the journal lacks, and one that differs', () => {
    const events = healthyJournal();
    const frames = seenAll(events).filter((f) => f.seq !== 3);
    frames.push({ seq: 9, data: { id: 'x' } });
    frames[0] = { seq: 1, data: { id: 'changed' } };
    const report = checkInvariants(input(events, { sse: new Map([[S, frames]]) }));
    expect(report.violations).toEqual(
      expect.arrayContaining([
        `${S}: SSE client never saw seq 3 (user.message)`,
        `${S}: SSE client saw seq 9, which the journal does not hold`,
        `${S}: SSE seq 1 differs from the journal's public event`,
      ]),
    );
  });

  it('reports one sandbox bound to two sessions, and a container whose name and label disagree', () => {
    const other = 'sesn_b';
    const shared = `berth-s-${S}-g1`;
    const journals = new Map([
      [S, healthyJournal(S, shared)],
      [other, healthyJournal(other, shared)],
    ]);
    const containers: ContainerView[] = [{ name: `/berth-s-${S}-g1`, labels: { 'berth.session': other } }];
    const report = checkInvariants({ journals, acked: [], sse: new Map(), containers });
    expect(report.violations).toEqual(
      expect.arrayContaining([
        `sandbox ${shared} was bound to 2 sessions: ${S}, ${other}`,
        `container /berth-s-${S}-g1 is labelled for session ${other} but named for session ${S}`,
      ]),
    );
  });
});

describe('chaos invariants: no sandbox bound twice across sandbox-managers', () => {
  it('reports a warm container two managers handed to two sessions: the first session is left bound to a name no container has', () => {
    const other = 'sesn_b';
    // Both journals bind their own name; on the engine the one pool container now carries the second name only.
    const journals = new Map([
      [S, healthyJournal(S, `berth-s-${S}-g1`)],
      [other, healthyJournal(other, `berth-s-${other}-g1`)],
    ]);
    const containers: ContainerView[] = [{ name: `/berth-s-${other}-g1`, labels: { 'berth.managed': 'true', 'berth.pool': 'env_1', 'berth.environment': 'env_1' } }];
    const report = checkInvariants({ journals, acked: [], sse: new Map(), containers });
    expect(report.violations).toEqual([`session ${S} is bound to berth-s-${S}-g1, which no container is named any more (handed to another session?)`]);
  });

  it('does not count a sandbox the session lost or released', () => {
    const lost = [...healthyJournal(), ev(7, 'SandboxLost', { sandbox_id: `berth-s-${S}-g1`, generation: 1, cause: 'die' }, 'died')];
    expect(checkInvariants(input(lost, { containers: [], sse: new Map([[S, seenAll(lost)]]) })).violations).toEqual([]);
  });
});

describe('chaos invariants: required outcome and full output', () => {
  const scripted: ExpectedOutput[] = [
    { kind: 'text', text: 'Running the slow step.' },
    { kind: 'tool_use', name: 'Bash' },
    { kind: 'tool_result', includes: 'step-done' },
    { kind: 'text', text: 'The slow step is done.' },
  ];
  const expectation = (allowed: TurnOutcome[] = ['completed']): TurnExpectation => ({ sessionId: S, turnId: 'turn_1', allowed, output: scripted });
  const text = (seq: number, t: string, offset: number) => ev(seq, 'AgentMessageRecorded', { turn_id: 'turn_1', content: [{ type: 'text', text: t }], offset }, `out${seq}`);
  const toolUse = (seq: number, offset: number) =>
    ev(seq, 'AgentToolUseRecorded', { turn_id: 'turn_1', offset, harness_tool_use_id: 'toolu_1', name: 'Bash', input: {}, evaluated_permission: 'allow' }, `out${seq}`);
  const toolResult = (seq: number, offset: number) =>
    ev(seq, 'AgentToolResultRecorded', { turn_id: 'turn_1', offset, tool_use_event_id: null, content: [{ type: 'text', text: 'step-done\n' }], is_error: false }, `out${seq}`);
  /** The healthy journal's first four events, then `outputs`, then `end`. */
  const journal = (outputs: ((seq: number) => RecordedEvent)[], end: (seq: number) => RecordedEvent) => {
    const events = healthyJournal().slice(0, 4);
    for (const make of outputs) events.push(make(events.length + 1));
    events.push(end(events.length + 1));
    return events;
  };
  const completed = (seq: number) => ev(seq, 'TurnCompleted', { turn_id: 'turn_1', interrupted: false }, 'done1');
  const full = [(q: number) => text(q, 'Running the slow step.', 0), (q: number) => toolUse(q, 1), (q: number) => toolResult(q, 2), (q: number) => text(q, 'The slow step is done.', 3)];
  const check = (events: RecordedEvent[], expectations: TurnExpectation[]) => checkInvariants(input(events, { expectations }));

  it('passes a completed turn that holds the scripted output once, in order', () => {
    expect(check(journal(full, completed), [expectation()])).toEqual({ violations: [], lost: 0, duplicated: 0, turns: 1 });
  });

  it('counts the replayed finish of a harness that completed as completed', () => {
    const replayed = (seq: number) => ev(seq, 'TurnRecovered', { turn_id: 'turn_1', method: 'replayed' }, 'rc');
    expect(check(journal(full, replayed), [expectation()]).violations).toEqual([]);
  });

  it('fails a completed turn that lost an output', () => {
    const report = check(journal([full[0], full[1], full[2]], completed), [expectation()]);
    expect(report.lost).toBe(1);
    expect(report.violations).toEqual([expect.stringContaining(`${S}: turn turn_1 (completed) recorded [text "Running the slow step.", tool_use Bash, tool_result "step-done\\n"]`)]);
    expect(report.violations[0]).toContain('; 1 lost');
  });

  it('fails an output recorded twice', () => {
    const report = check(journal([...full.slice(0, 3), (q) => toolResult(q, 4), full[3]], completed), [expectation()]);
    expect(report.duplicated).toBe(1);
    expect(report.violations[0]).toContain('; 1 recorded twice');
  });

  it('fails outputs out of order', () => {
    const report = check(journal([full[1], full[0], full[2], full[3]], completed), [expectation()]);
    expect(report.violations).toEqual([expect.stringContaining('out of order or not scripted')]);
  });

  it('fails a turn that ended otherwise than the scenario requires (failed, where only completed may do)', () => {
    const failed = (seq: number) => ev(seq, 'TurnFailed', { turn_id: 'turn_1', reason: 'no_progress', message: 'gave up' }, 'rc');
    const report = check(journal(full.slice(0, 2), failed), [expectation()]);
    expect(report.violations).toEqual([`${S}: turn turn_1 ended failed:no_progress; this scenario requires completed`]);
  });

  it('lets sandbox loss end the turn failed with its named reason, with a prefix of the output', () => {
    const lost = (seq: number) => ev(seq, 'TurnFailed', { turn_id: 'turn_1', reason: 'sandbox_lost', message: 'the sandbox is gone' }, 'rc');
    expect(check(journal(full.slice(0, 2), lost), [expectation(['completed', 'failed:sandbox_lost'])]).violations).toEqual([]);
    const otherReason = (seq: number) => ev(seq, 'TurnFailed', { turn_id: 'turn_1', reason: 'harness_failed', message: 'x' }, 'rc');
    expect(check(journal(full.slice(0, 2), otherReason), [expectation(['completed', 'failed:sandbox_lost'])]).violations).toEqual([
      `${S}: turn turn_1 ended failed:harness_failed; this scenario requires completed or failed:sandbox_lost`,
    ]);
  });

  it('fails an acknowledged message recorded twice (a retry that was not deduplicated)', () => {
    const events = healthyJournal();
    const again = ev(7, 'UserMessageReceived', { turn_id: 'turn_2', content: [{ type: 'text', text: 'hi' }], queued: false }, 'msg2');
    const report = checkInvariants(input([...events, again, ev(8, 'TurnStarted', { turn_id: 'turn_2' }, 'msg2', 1), ev(9, 'TurnCompleted', { turn_id: 'turn_2' }, 'done2')], {
      acked: [{ sessionId: S, label: 'user.message', eventId: 'sevt_msg1_0', text: 'hi' }],
    }));
    expect(report.duplicated).toBe(1);
    expect(report.violations).toContain(`${S}: the message "hi" was recorded 2 times`);
  });
});

describe('chaos invariants: sandboxes across two Docker engines', () => {
  const HOSTS = ['a', 'b'];
  const sandbox = `berth-s-${S}-g1`;
  /** The healthy journal, its binding recorded on `host` (none: the field left out). */
  const boundOn = (host: string | undefined): RecordedEvent[] =>
    healthyJournal().map((e) => (e.type === 'SandboxBound' ? ({ ...e, data: { ...e.data, ...(host === undefined ? {} : { host }) } } as RecordedEvent) : e));
  const on = (host: string, name = sandbox): ContainerView => ({ name: `/${name}`, labels: { 'berth.session': S }, host });
  const check = (events: RecordedEvent[], containers: ContainerView[]) => checkInvariants(input(events, { containers, sandboxHosts: HOSTS })).violations;

  it('passes a session bound on b whose container engine b lists', () => {
    expect(check(boundOn('b'), [on('b')])).toEqual([]);
  });

  it('reports one sandbox name on both engines', () => {
    expect(check(boundOn('a'), [on('a'), on('b')])).toEqual([`container ${sandbox} exists on 2 sandbox hosts: a, b`]);
  });

  it('reports a binding without its host when the managers place on two', () => {
    expect(check(boundOn(undefined), [on('a')])).toEqual([`session ${S}: sandbox ${sandbox} was bound without a host, with sandbox hosts a, b`]);
  });

  it('reports one generation bound twice, on another host', () => {
    const events = boundOn('a');
    const again = { ...events[1], id: 'sevt_bind_again', data: { ...events[1].data, host: 'b' } } as RecordedEvent;
    const twice = [...events.slice(0, 2), again, ...events.slice(2)].map((e, i) => ({ ...e, seq: i + 1 }));
    expect(checkInvariants(input(twice, { containers: [on('b')], sandboxHosts: HOSTS, sse: new Map([[S, seenAll(twice)]]) })).violations).toEqual([
      `session ${S}: generation 1 was bound twice: ${sandbox} on a, then ${sandbox} on b`,
    ]);
  });

  it('reports a current binding whose container is on another engine than the one it names', () => {
    expect(check(boundOn('a'), [on('b')])).toEqual([`session ${S} is bound to ${sandbox} on host a, but that container is on b`]);
  });
});
