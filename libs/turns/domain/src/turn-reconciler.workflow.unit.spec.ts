import fc from 'fast-check';
import type { TurnReconcileInput } from './inputs';
import type { TurnReconcileOutput } from './outputs';
import { defaultReconcilePolicy } from './policy';
import { workflowSpec } from '@berth/core/testing';
import { facts, journal, observed, settled, SESSION, tick, TURN } from './testing/turn-fixtures';
import { turnReconciler } from './turn-reconciler.workflow';

const policy = defaultReconcilePolicy; // probe after 5 s, retry 1 s, pending timeout 5 s, 5 attempts
const workflow = turnReconciler(policy);
const spec = workflowSpec(workflow);

/** A session whose sandbox (generation 1) is bound and whose turn 1 has recorded outputs 0..2. */
function runningTurn() {
  const j = journal();
  const history: TurnReconcileInput[] = [
    j.event('SandboxRequested', { generation: 1, reason: 'startup' }, 0),
    j.event('SandboxBound', { sandbox_id: 'sbx_1', generation: 1, expires_at: null, warm: true }, 0),
    j.event('TurnStarted', { turn_id: TURN }, 100),
    j.event('AgentThinkingRecorded', { turn_id: TURN, offset: 0 }, 200),
    j.event('AgentMessageRecorded', { turn_id: TURN, offset: 1, content: [{ type: 'text', text: 'working' }] }, 300),
    j.event('UsageRecorded', { turn_id: TURN, offset: 2, usage: { input_tokens: 1, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 } }, 400),
  ];
  return { j, history };
}

/** The running turn, silent long enough to be probed; the probe is pending. */
function probedTurn(extra: (j: ReturnType<typeof journal>) => TurnReconcileInput[] = () => []) {
  const { j, history } = runningTurn();
  return { j, history: [...history, ...extra(j), tick(6_000)] };
}

const effect = (e: Record<string, unknown>): TurnReconcileOutput =>
  ({ kind: 'effect', session_id: SESSION, turn_id: TURN, generation: 1, ...e }) as TurnReconcileOutput;
const probe = (): TurnReconcileOutput => effect({ effect: 'probe' });
const cmd = (type: string, data: object, idStep: string): TurnReconcileOutput =>
  ({
    kind: 'command',
    session_id: SESSION,
    command_id: `cmd_rc_${TURN}_g1_${idStep}`,
    command: { type, data: { turn_id: TURN, ...data } },
  }) as TurnReconcileOutput;

describe('turn reconciler: noticing a turn without progress', () => {
  it('leaves a turn alone while it is within the silence threshold', () => {
    spec.given(runningTurn().history).when(tick(5_000)).thenNothing();
  });

  it('probes a running turn that has been silent for the threshold', () => {
    spec.given(runningTurn().history).when(tick(5_400)).then([probe()]);
  });

  it('measures silence from the last output, not from the turn start', () => {
    const { j, history } = runningTurn();
    const later = j.event('AgentMessageRecorded', { turn_id: TURN, offset: 3, content: [{ type: 'text', text: 'more' }] }, 4_000);
    spec.given([...history, later]).when(tick(8_000)).thenNothing();
  });

  it('never probes a turn that waits for a tool confirmation', () => {
    const { j, history } = runningTurn();
    const waiting = j.event('TurnAwaitingConfirmation', { turn_id: TURN, event_ids: ['sevt_9'] }, 500);
    spec.given([...history, waiting]).when(tick(60_000)).thenNothing();
  });

  it('probes at the next sweep, without waiting for silence, once the journal says the sandbox was lost', () => {
    const { j, history } = runningTurn();
    const lost = j.event('SandboxLost', { sandbox_id: 'sbx_1', generation: 1, cause: 'oom' }, 700);
    spec.given(history).when(lost).thenNothing();
    spec.given([...history, lost]).when(tick(700)).then([probe()]);
  });

  it('probes a turn waiting for a tool confirmation once its sandbox is lost', () => {
    const { j, history } = runningTurn();
    const waiting = j.event('TurnAwaitingConfirmation', { turn_id: TURN, event_ids: ['sevt_9'] }, 500);
    const lost = j.event('SandboxLost', { sandbox_id: 'sbx_1', generation: 1, cause: 'oom' }, 700);
    spec.given([...history, waiting, lost]).when(tick(800)).then([probe()]);
  });

  it('has nothing to do for a session without an open turn', () => {
    const j = journal();
    spec.given([j.event('SandboxBound', { sandbox_id: 'sbx_1', generation: 1, expires_at: null, warm: false }, 0)]).when(tick(60_000)).thenNothing();
  });
});

describe('rung 1: a terminal already in the journal is replayed', () => {
  it('does nothing once the journal holds the turn terminal, even when a probe answer arrives afterwards', () => {
    const { j, history } = probedTurn();
    const completed = j.event('TurnCompleted', { turn_id: TURN, interrupted: false }, 6_100);
    spec.given([...history, completed]).when(observed(6_200, facts({ harness: { alive: false, attached: false } }))).thenNothing();
  });

  it('does nothing on later sweeps for a failed or recovered turn', () => {
    for (const terminal of ['TurnFailed', 'TurnRecovered'] as const) {
      const { j, history } = runningTurn();
      const end =
        terminal === 'TurnFailed'
          ? j.event('TurnFailed', { turn_id: TURN, reason: 'model_error', message: 'x' }, 500)
          : j.event('TurnRecovered', { turn_id: TURN, method: 'reattached' }, 500);
      spec.given([...history, end]).when(tick(120_000)).thenNothing();
    }
  });

  it('settles the turn as replayed when the finished output file is already fully journaled', () => {
    const f = facts({ harness: { alive: false, attached: false }, output: { complete: true, last_offset: 2 } });
    spec.given(probedTurn().history).when(observed(6_100, f)).then([cmd('RecoverTurn', { method: 'replayed' }, 'replayed')]);
  });

  it('leaves a finished turn the sandbox-manager still streams to the manager, whose CompleteTurn is on the way', () => {
    const f = facts({ harness: { alive: false, attached: true }, output: { complete: true, last_offset: 2 } });
    spec.given(probedTurn().history).when(observed(6_100, f)).thenNothing();
  });
});

describe('rung 2: a harness still running is reattached', () => {
  it('asks to reattach from the first offset not yet in the journal', () => {
    const f = facts({ harness: { alive: true, attached: false } });
    spec.given(probedTurn().history).when(observed(6_100, f)).then([effect({ effect: 'reattach', from_offset: 3 })]);
  });

  it('leaves an attached, alive harness alone and probes it again one period later', () => {
    const { history } = probedTurn();
    const healthy = observed(6_100, facts());
    spec.given([...history, healthy]).when(tick(11_000)).thenNothing();
    spec.given([...history, healthy]).when(tick(11_100)).then([probe()]);
  });

  it('fails a harness that is alive and attached but silent past the stall limit', () => {
    const { history } = runningTurn();
    const stalled = [...history, tick(policy.stallMs + 400)];
    spec
      .given(stalled)
      .when(observed(policy.stallMs + 500, facts()))
      .thenMatches([{ kind: 'command', command: { type: 'FailTurn', data: { turn_id: TURN, reason: 'no_progress' } } }]);
  });

  it('counts a reattach that brings no new output as an attempt, and a new output resets the count', () => {
    const { j, history } = runningTurn();
    const detached = facts({ harness: { alive: true, attached: false } });
    const cycles: TurnReconcileInput[] = [];
    let ms = 6_000;
    for (let i = 0; i < policy.maxAttempts - 1; i++) {
      cycles.push(tick(ms), observed(ms + 10, detached), settled(ms + 20, 'reattach', 'done'));
      ms += policy.probeAfterMs + 100;
    }
    const lastCycle = [tick(ms), observed(ms + 10, detached)];
    spec
      .given([...history, ...cycles, ...lastCycle])
      .when(settled(ms + 20, 'reattach', 'done'))
      .thenNothing();
    spec
      .given([...history, ...cycles, ...lastCycle, settled(ms + 20, 'reattach', 'failed')])
      .when(tick(ms + 5_000))
      .thenNothing();
    const progress = j.event('AgentMessageRecorded', { turn_id: TURN, offset: 3, content: [{ type: 'text', text: 'back' }] }, ms + 30);
    const afterProgress = [...history, ...cycles, ...lastCycle, settled(ms + 20, 'reattach', 'done'), progress];
    spec.given(afterProgress).when(tick(ms + 30 + policy.probeAfterMs)).then([probe()]);
  });

  it('burns no attempt on a failed reattach of a live harness, and asks again one period later', () => {
    const detached = facts({ harness: { alive: true, attached: false } });
    const story: TurnReconcileInput[] = [...runningTurn().history];
    let ms = 6_000;
    for (let i = 0; i < policy.maxAttempts + 2; i++) {
      story.push(tick(ms), observed(ms + 10, detached), settled(ms + 20, 'reattach', 'failed', { message: 'no responders' }));
      ms += policy.probeAfterMs + 20;
    }
    spec.given(story).when(tick(ms - 1)).thenNothing();
    spec.given(story).when(tick(ms)).then([probe()]);
    spec.given([...story, tick(ms)]).when(observed(ms + 10, detached)).thenMatches([{ effect: 'reattach', from_offset: 3 }]);
  });
});

describe('rung 3: complete output left in the sandbox is recovered', () => {
  const exitedWithOutput = facts({ harness: { alive: false, attached: false }, output: { complete: true, last_offset: 5 } });

  it('asks to recover the outputs the journal is missing', () => {
    spec
      .given(probedTurn().history)
      .when(observed(6_100, exitedWithOutput))
      .then([effect({ effect: 'recoverOutput', from_offset: 3, through_offset: 5 })]);
  });

  it('also recovers from a stopped (exited) container, whose files are still readable', () => {
    spec
      .given(probedTurn().history)
      .when(observed(6_100, { ...exitedWithOutput, sandbox: 'exited' }))
      .thenMatches([{ kind: 'effect', effect: 'recoverOutput' }]);
  });

  it('settles the turn as output_recovered once the outputs are recorded', () => {
    spec
      .given([...probedTurn().history, observed(6_100, exitedWithOutput)])
      .when(settled(6_500, 'recoverOutput', 'done'))
      .then([cmd('RecoverTurn', { method: 'output_recovered' }, 'output_recovered')]);
  });

  it('retries after a failed recovery by probing again', () => {
    const history = [...probedTurn().history, observed(6_100, exitedWithOutput), settled(6_500, 'recoverOutput', 'failed')];
    spec.given(history).when(tick(7_000)).thenNothing();
    spec.given(history).when(tick(7_500)).then([probe()]);
  });
});

describe('rung 4: the harness is gone', () => {
  const lostRun = () => probedTurn((j) => [j.event('SandboxLost', { sandbox_id: 'sbx_1', generation: 1, cause: 'die' }, 5_000)]);
  const gone = (over = {}) => facts({ sandbox: 'missing', harness: { alive: false, attached: false }, output: null, input_delivered: null, ...over });

  it('restores the transcript mirror after marking the turn transcript-pending', () => {
    spec
      .given(lostRun().history)
      .when(observed(5_100, gone({ transcript: { present: true, bytes: 4_096 } })))
      .then([
        cmd('MarkTranscriptPending', {}, 'transcript_pending'),
        effect({ effect: 'restoreTranscriptAndResume', transcript_bytes: 4_096 }),
      ]);
  });

  it('does not mark the turn pending twice when the journal already says so', () => {
    const { j, history } = lostRun();
    const pending = j.event('TurnTranscriptPending', { turn_id: TURN }, 5_050);
    spec
      .given([...history, pending])
      .when(observed(5_100, gone({ transcript: { present: true, bytes: 10 } })))
      .then([effect({ effect: 'restoreTranscriptAndResume', transcript_bytes: 10 })]);
  });

  it('settles the turn as transcript_recovered when the restore succeeds', () => {
    spec
      .given([...lostRun().history, observed(5_100, gone({ transcript: { present: true, bytes: 10 } }))])
      .when(settled(5_500, 'restoreTranscriptAndResume', 'done'))
      .then([cmd('RecoverTurn', { method: 'transcript_recovered' }, 'transcript_recovered')]);
  });

  it('fails the turn as transcript_unrecoverable when the mirror cannot be restored', () => {
    spec
      .given([...lostRun().history, observed(5_100, gone({ transcript: { present: true, bytes: 10 } }))])
      .when(settled(5_500, 'restoreTranscriptAndResume', 'impossible', { message: 'no harness session id' }))
      .then([
        cmd('FailTurn', { reason: 'transcript_unrecoverable', message: 'The transcript could not be restored: no harness session id' }, 'fail_transcript_unrecoverable'),
      ]);
  });

  it('fails the turn as sandbox_lost when there is no transcript to recover from', () => {
    spec
      .given(lostRun().history)
      .when(observed(5_100, gone()))
      .thenMatches([{ command: { type: 'FailTurn', data: { turn_id: TURN, reason: 'sandbox_lost' } } }]);
  });

  it('fails with input_not_delivered when the input never reached the harness, so the client can resend it', () => {
    const j = journal();
    const history: TurnReconcileInput[] = [
      j.event('SandboxBound', { sandbox_id: 'sbx_1', generation: 1, expires_at: null, warm: true }, 0),
      j.event('TurnStarted', { turn_id: TURN }, 100),
      tick(5_200),
    ];
    const noHarness = facts({ harness: { alive: false, attached: false }, input_delivered: false, output: null });
    spec.given(history).when(observed(5_300, noHarness)).thenNothing();
    spec
      .given([...history, observed(5_300, noHarness), tick(10_300)])
      .when(observed(10_400, noHarness))
      .then([cmd('FailTurn', { reason: 'input_not_delivered', message: 'The message never reached the agent; send it again.' }, 'fail_input_not_delivered')]);
  });

  it('trusts the journal over an unknown delivery: a harness session report proves the input arrived', () => {
    const j = journal();
    const history: TurnReconcileInput[] = [
      j.event('SandboxBound', { sandbox_id: 'sbx_1', generation: 1, expires_at: null, warm: true }, 0),
      j.event('TurnStarted', { turn_id: TURN }, 100),
      j.event('HarnessSessionRecorded', { turn_id: TURN, harness_session_id: 'h1' }, 200),
      j.event('SandboxLost', { sandbox_id: 'sbx_1', generation: 1, cause: 'die' }, 300),
      tick(1_000),
    ];
    spec
      .given(history)
      .when(observed(1_100, gone()))
      .thenMatches([{ command: { type: 'FailTurn', data: { reason: 'sandbox_lost' } } }]);
  });

  it('fails with harness_failed when the harness died in a sandbox that still runs, leaving nothing to recover', () => {
    const f = facts({ harness: { alive: false, attached: false }, output: { complete: false, last_offset: 2 } });
    spec
      .given(probedTurn().history)
      .when(observed(6_100, f))
      .thenMatches([{ command: { type: 'FailTurn', data: { reason: 'harness_failed' } } }]);
  });

  it('waits for a sandbox that is still being created, then gives up on it after the startup grace', () => {
    const j = journal();
    const history: TurnReconcileInput[] = [
      j.event('TurnStarted', { turn_id: TURN }, 0),
      j.event('SandboxRequested', { generation: 1, reason: 'rebuild' }, 10),
    ];
    const notYet = facts({ sandbox: 'missing', harness: { alive: false, attached: false }, input_delivered: null, output: null });
    spec.given([...history, tick(5_100)]).when(observed(5_200, notYet)).thenNothing();
    const late = policy.startupGraceMs + 100;
    spec
      .given([...history, tick(late), observed(late + 10, notYet), tick(late + 5_100)])
      .when(observed(late + 5_200, notYet))
      .thenMatches([{ command: { type: 'FailTurn', data: { reason: 'input_not_delivered' } } }]);
  });

  it('neither reattaches nor re-reads output once the journal records the sandbox as lost (the kernel would refuse both)', () => {
    const stale = facts({ harness: { alive: true, attached: false }, output: { complete: true, last_offset: 5 } });
    spec
      .given(lostRun().history)
      .when(observed(5_100, stale))
      .thenMatches([{ command: { type: 'FailTurn', data: { reason: 'sandbox_lost' } } }]);
  });
});

describe('bounded attempts', () => {
  const failProbe = (ms: number) => settled(ms, 'probe', 'failed', { message: 'timeout' });

  /** Probes that fail from `startMs` on, each retried when due (the delay doubles); ends with the last probe pending. */
  function failingProbes(history: TurnReconcileInput[], startMs: number, failures: number): { story: TurnReconcileInput[]; ms: number } {
    const story = [...history];
    let ms = startMs;
    for (let i = 0; i < failures; i++) {
      story.push(tick(ms), failProbe(ms + 100));
      ms += 100 + policy.retryAfterMs * 2 ** i;
    }
    story.push(tick(ms));
    return { story, ms };
  }

  it('retries a failed probe after a delay that doubles with each failure', () => {
    const { story, ms } = failingProbes(runningTurn().history, 6_000, 2);
    const last = story.slice(0, -1);
    // The second failure came at ms - 2 s: the next probe is due 2 s after it, not 1 s.
    spec.given(last).when(tick(ms - 1_000)).thenNothing();
    spec.given(last).when(tick(ms)).then([probe()]);
  });

  it('settles the turn as no_progress after the last failed probe', () => {
    const { story, ms } = failingProbes(runningTurn().history, 6_000, policy.maxAttempts - 1);
    spec
      .given(story)
      .when(failProbe(ms + 100))
      .thenMatches([{ command: { type: 'FailTurn', data: { reason: 'no_progress', message: `Recovery gave up after ${policy.maxAttempts} attempts: probe failed: timeout` } } }]);
  });

  it('names the lost sandbox when the attempts run out after the journal reported it', () => {
    const { j, history } = runningTurn();
    const lost = j.event('SandboxLost', { sandbox_id: 'sbx_1', generation: 1, cause: 'die' }, 1_000);
    const { story, ms } = failingProbes([...history, lost], 1_000, policy.maxAttempts - 1);
    spec
      .given(story)
      .when(failProbe(ms + 100))
      .thenMatches([{ command: { type: 'FailTurn', data: { reason: 'sandbox_lost' } } }]);
  });

  it('counts an unanswered probe as a failed attempt once the pending timeout passes', () => {
    const { history } = probedTurn();
    spec.given(history).when(tick(6_000 + policy.pendingTimeoutMs - 1)).thenNothing();
    const timedOut = [...history, tick(6_000 + policy.pendingTimeoutMs)];
    spec.given(timedOut).when(tick(6_000 + policy.pendingTimeoutMs + policy.retryAfterMs)).then([probe()]);
  });

  it('sends its final verdict again, with the same id, while the journal does not show it', () => {
    const { story, ms } = failingProbes(runningTurn().history, 6_000, policy.maxAttempts - 1);
    const verdictAt = ms + 100;
    const withVerdict = [...story, failProbe(verdictAt)];
    const verdict = workflow.decide(failProbe(verdictAt), story.reduce(workflow.evolve, workflow.initialState()));
    spec.given(withVerdict).when(tick(verdictAt + policy.pendingTimeoutMs - 1)).thenNothing();
    spec.given(withVerdict).when(tick(verdictAt + policy.pendingTimeoutMs)).then(verdict);
  });

  it('re-derives an earlier verdict from a fresh probe when it went unanswered', () => {
    const lostFacts = facts({ sandbox: 'missing', harness: { alive: false, attached: false }, output: null });
    const history = [...probedTurn().history, observed(6_100, lostFacts)];
    spec.given(history).when(tick(6_100 + policy.pendingTimeoutMs)).thenNothing();
    spec.given([...history, tick(6_100 + policy.pendingTimeoutMs)]).when(tick(6_100 + policy.pendingTimeoutMs + policy.retryAfterMs)).then([probe()]);
  });
});

describe('an unanswered sandbox-manager is no evidence about the turn', () => {
  const unanswered = (ms: number) => settled(ms, 'probe', 'unanswered', { message: 'no responders' });
  const running = facts({ sandbox: 'running', harness: { alive: true, attached: false }, output: null });

  /** Probes nobody answers from `startMs` on, each retried when due; ends with the last probe pending. */
  function unansweredProbes(startMs: number, count: number): { story: TurnReconcileInput[]; ms: number } {
    const story: TurnReconcileInput[] = [...runningTurn().history];
    let ms = startMs;
    for (let i = 0; i < count; i++) {
      story.push(tick(ms), unanswered(ms + 100));
      ms += 100 + policy.retryAfterMs;
    }
    story.push(tick(ms));
    return { story, ms };
  }

  it('asks again after the retry delay, without doubling it and without burning an attempt', () => {
    const { story, ms } = unansweredProbes(6_000, policy.maxAttempts + 3);
    spec.given(story).when(unanswered(ms + 100)).thenNothing();
    spec.given([...story, unanswered(ms + 100)]).when(tick(ms + 100 + policy.retryAfterMs - 1)).thenNothing();
    spec.given([...story, unanswered(ms + 100)]).when(tick(ms + 100 + policy.retryAfterMs)).then([probe()]);
  });

  it('climbs the ladder as usual once a sandbox-manager answers again', () => {
    const { story, ms } = unansweredProbes(6_000, policy.maxAttempts + 3);
    spec.given(story).when(observed(ms + 100, running)).then([effect({ effect: 'reattach', from_offset: 3 })]);
  });

  it('fails the turn no_progress, naming the silence, once nobody has answered for unansweredMs', () => {
    const quick = turnReconciler({ ...policy, unansweredMs: 10_000 });
    const { story, ms } = unansweredProbes(6_000, 9);
    // The first unanswered probe came at 6.1 s; the tenth, at ms + 100, is 9.9 s later: still waiting.
    workflowSpec(quick).given(story).when(unanswered(ms + 100)).thenNothing();
    const later = [...story, unanswered(ms + 100), tick(ms + 100 + policy.retryAfterMs)];
    workflowSpec(quick)
      .given(later)
      .when(unanswered(ms + 200 + policy.retryAfterMs))
      .thenMatches([{ command: { type: 'FailTurn', data: { reason: 'no_progress', message: 'No sandbox-manager answered for 11 s (last: probe unanswered: no responders).' } } }]);
  });

  it('measures the silence afresh after an answer in between', () => {
    const quick = turnReconciler({ ...policy, unansweredMs: 10_000 });
    const { story, ms } = unansweredProbes(6_000, 5);
    const answeredThen = [...story, observed(ms + 100, running), settled(ms + 200, 'reattach', 'failed'), tick(ms + 200 + policy.probeAfterMs)];
    const again = ms + 300 + policy.probeAfterMs;
    workflowSpec(quick).given(answeredThen).when(unanswered(again)).thenNothing();
    workflowSpec(quick).given([...answeredThen, unanswered(again), tick(again + 9_000)]).when(unanswered(again + 9_500)).thenNothing();
  });
});

describe('fences: stale facts change nothing', () => {
  const detached = facts({ harness: { alive: true, attached: false } });

  it('ignores facts about another turn', () => {
    spec.given(probedTurn().history).when(observed(6_100, detached, 'turn_other')).thenNothing();
  });

  it('ignores facts about an older sandbox generation', () => {
    const { j, history } = probedTurn();
    const rebuilt = [
      j.event('SandboxRequested', { generation: 2, reason: 'rebuild' }, 6_050),
      j.event('SandboxBound', { sandbox_id: 'sbx_2', generation: 2, expires_at: null, warm: true }, 6_060),
    ];
    spec.given([...history, ...rebuilt, tick(12_000)]).when(observed(12_100, detached, TURN, 1)).thenNothing();
    spec.given([...history, ...rebuilt, tick(12_000)]).when(observed(12_100, detached, TURN, 2)).thenMatches([{ effect: 'reattach', generation: 2 }]);
  });

  it('ignores facts nobody asked for', () => {
    spec.given(runningTurn().history).when(observed(1_000, detached)).thenNothing();
  });

  it('ignores an effect result for another generation, and one for an effect not in flight', () => {
    const history = [...probedTurn().history, observed(6_100, facts({ harness: { alive: false, attached: false }, output: { complete: true, last_offset: 5 } }))];
    spec.given(history).when(settled(6_200, 'recoverOutput', 'done', { generation: 0 })).thenNothing();
    spec.given(history).when(settled(6_200, 'restoreTranscriptAndResume', 'done')).thenNothing();
  });

  it('ignores a lost report for an older generation', () => {
    const { j, history } = runningTurn();
    const rebuilt = [
      j.event('SandboxRequested', { generation: 2, reason: 'rebuild' }, 500),
      j.event('SandboxBound', { sandbox_id: 'sbx_2', generation: 2, expires_at: null, warm: true }, 600),
    ];
    const staleLoss = j.event('SandboxLost', { sandbox_id: 'sbx_1', generation: 1, cause: 'die' }, 700);
    spec.given([...history, ...rebuilt, staleLoss]).when(tick(800)).thenNothing();
  });

  it('gives two reconcilers that see the same facts the same command id, so only one command takes effect', () => {
    const f = facts({ sandbox: 'missing', harness: { alive: false, attached: false }, output: null });
    const a = turnReconciler(policy);
    const b = turnReconciler({ ...policy, retryAfterMs: 2_000 });
    const run = (w: typeof a, inputs: readonly TurnReconcileInput[]) => w.decide(inputs[inputs.length - 1], inputs.slice(0, -1).reduce(w.evolve, w.initialState()));
    const inputs = [...probedTurn().history, observed(6_100, f)];
    expect(run(a, inputs)).toEqual(run(b, inputs));
    expect(run(a, inputs)).toHaveLength(1);
  });
});

describe('idempotency: the same input twice produces no second output', () => {
  it('a repeated sweep tick asks for one probe', () => {
    expect(spec.given(runningTurn().history).when(tick(6_000)).andAgain()).toEqual([]);
  });

  it('repeated facts ask for one reattach', () => {
    const outcome = spec.given(probedTurn().history).when(observed(6_100, facts({ harness: { alive: true, attached: false } })));
    outcome.thenMatches([{ effect: 'reattach' }]);
    expect(outcome.andAgain()).toEqual([]);
  });

  it('a repeated effect result sends one RecoverTurn', () => {
    const history = [...probedTurn().history, observed(6_100, facts({ harness: { alive: false, attached: false }, output: { complete: true, last_offset: 5 } }))];
    expect(spec.given(history).when(settled(6_500, 'recoverOutput', 'done')).andAgain()).toEqual([]);
  });

  it('an old event read back from the journal does not reopen a settled turn', () => {
    const { j, history } = runningTurn();
    const started = history[2];
    const completed = j.event('TurnCompleted', { turn_id: TURN, interrupted: false }, 500);
    spec.given([...history, completed, started]).when(tick(60_000)).thenNothing();
  });

  it('holds for any story: repeating any input right after itself never produces output', () => {
    const { j, history } = runningTurn();
    const pool: TurnReconcileInput[] = [
      tick(6_000),
      tick(12_000),
      tick(30_000),
      observed(6_100, facts({ harness: { alive: true, attached: false } })),
      observed(6_100, facts({ sandbox: 'missing', harness: { alive: false, attached: false }, output: null, transcript: { present: true, bytes: 9 } })),
      observed(6_100, facts({ harness: { alive: false, attached: false }, output: { complete: true, last_offset: 4 } })),
      settled(6_200, 'probe', 'failed'),
      settled(6_200, 'probe', 'unanswered'),
      settled(6_200, 'reattach', 'done'),
      settled(6_200, 'recoverOutput', 'done'),
      settled(6_200, 'restoreTranscriptAndResume', 'impossible'),
      j.event('SandboxLost', { sandbox_id: 'sbx_1', generation: 1, cause: 'die' }, 6_300),
      j.event('AgentMessageRecorded', { turn_id: TURN, offset: 3, content: [{ type: 'text', text: 'x' }] }, 6_400),
    ];
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: pool.length - 1 }), { maxLength: 25 }), (picks) => {
        let state = history.reduce(workflow.evolve, workflow.initialState());
        for (const i of picks) {
          const input = pool[i];
          workflow.decide(input, state);
          state = workflow.evolve(state, input);
          const again: readonly TurnReconcileOutput[] = workflow.decide(input, state);
          expect(again).toEqual([]);
        }
      }),
    );
  });
});

describe('turn reconciler: timing by its own clock, whatever the kernel clock says', () => {
  /** A journal event stamped `skewMs` away from when the reconciler received it at `receivedMs`. */
  const skewed = (input: TurnReconcileInput, skewMs: number): TurnReconcileInput => {
    if (input.kind !== 'event') return input;
    const occurred = new Date(Date.parse(input.now) + skewMs).toISOString();
    return { ...input, event: { ...input.event, occurred_at: occurred } };
  };
  const newTurn = (skewMs: number) => {
    const j = journal();
    return [
      skewed(j.event('SandboxBound', { sandbox_id: 'sbx_1', generation: 1, expires_at: null, warm: true }, 0), skewMs),
      skewed(j.event('TurnStarted', { turn_id: TURN }, 100), skewMs),
    ];
  };
  const noHarness = facts({ harness: { alive: false, attached: false }, input_delivered: false, output: null });

  it.each([
    ['5 minutes behind', -5 * 60_000],
    ['2 hours ahead', 2 * 3_600_000],
  ])('given a kernel clock %s, when the sweep runs right after the turn started, then nothing is probed', (_name, skewMs) => {
    spec.given(newTurn(skewMs)).when(tick(200)).thenNothing();
    spec.given(newTurn(skewMs)).when(tick(5_000)).thenNothing();
  });

  it.each([
    ['5 minutes behind', -5 * 60_000],
    ['2 hours ahead', 2 * 3_600_000],
  ])('given a kernel clock %s, when the turn is silent for the threshold by our clock, then it is probed on time', (_name, skewMs) => {
    spec.given(newTurn(skewMs)).when(tick(5_200)).then([probe()]);
  });

  it('given a kernel clock far behind, a single probe finding no harness yet is no verdict', () => {
    spec.given([...newTurn(-5 * 60_000), tick(5_200)]).when(observed(5_300, noHarness)).thenNothing();
  });

  it('given one probe found no harness, when a harness start shows up before the second, then the turn is not failed', () => {
    const starting = facts({ sandbox: 'starting', harness: { alive: false, attached: false }, input_delivered: false, output: null });
    spec
      .given([...newTurn(-5 * 60_000), tick(5_200), observed(5_300, noHarness), tick(10_300)])
      .when(observed(10_400, starting))
      .thenNothing();
  });

  it('given two probes a silence period apart found no harness, then the turn fails input_not_delivered', () => {
    spec
      .given([...newTurn(-5 * 60_000), tick(5_200), observed(5_300, noHarness), tick(10_300)])
      .when(observed(10_400, noHarness))
      .thenMatches([{ command: { type: 'FailTurn', data: { reason: 'input_not_delivered' } } }]);
  });
});
