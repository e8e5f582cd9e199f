import type { Workflow } from '@berth/core';
import type { TurnFailureReason } from '@berth/contracts';
import { reconcileCommandId } from './command-ids';
import type { EffectSettled, FactsObserved, ObservedFacts, TurnReconcileInput } from './inputs';
import type { SendCommand, TurnCommand, TurnEffect, TurnReconcileOutput } from './outputs';
import { defaultReconcilePolicy, type ReconcilePolicy } from './policy';
import { foldEvent, initialTurnReconcileState, type OpenTurn, type TurnReconcileState } from './turn-state';

type Step = Readonly<{ state: TurnReconcileState; outputs: readonly TurnReconcileOutput[] }>;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/**
 * Drives every turn to a terminal: completed (by the harness), recovered or failed with a named
 * reason. One instance per session. `decide` and `evolve` share one pure `step`, so the state
 * always remembers what was asked (a repeated input finds the request pending and asks nothing).
 *
 * The convergence ladder, climbed on the facts a probe returns, in order:
 *   1. the turn's terminal is already in the journal → nothing, or `RecoverTurn{replayed}` when the
 *      finished output file is fully journaled but the turn was never settled;
 *   2. the harness still runs in a live sandbox → reattach from the next unrecorded offset;
 *   3. the sandbox holds a complete output file → recover it (`output_recovered`);
 *   4. otherwise the harness is gone: input that never reached it → `input_not_delivered`;
 *      a transcript mirror → restore it (`transcript_recovered`, or `transcript_unrecoverable`);
 *      else `sandbox_lost` (or `harness_failed` when the sandbox itself lives).
 * Events only update the view; decisions are taken on sweep ticks (after the caller caught up on
 * the journal) and on the answers to what was asked.
 * Fences: facts or results for another turn, another generation, or that nobody asked for change
 * nothing; journal events at or below the last folded seq change nothing.
 */
export function turnReconciler(policy: ReconcilePolicy = defaultReconcilePolicy): Workflow<TurnReconcileInput, TurnReconcileState, TurnReconcileOutput> {
  const step = (input: TurnReconcileInput, state: TurnReconcileState): Step => {
    const nowMs = Date.parse(input.now);
    switch (input.kind) {
      case 'event':
        // Events only update the view; decisions wait for the sweep, which first catches up on the journal.
        return nothing(foldEvent(state, input.event, nowMs, policy.probeAfterMs));
      case 'tick':
        return onTick(state, nowMs);
      case 'observed':
        return onObserved(state, input, nowMs);
      case 'effect_result':
        return onEffectSettled(state, input, nowMs);
    }
  };

  const nothing = (state: TurnReconcileState): Step => ({ state, outputs: [] });
  const withTurn = (state: TurnReconcileState, turn: OpenTurn): TurnReconcileState => ({ ...state, turn });

  /** The open turn, unless there is nothing the reconciler may still do for it. */
  const activeTurn = (state: TurnReconcileState): OpenTurn | null =>
    state.turn && state.session_id && !state.deleted ? state.turn : null;

  const effect = (state: TurnReconcileState, turn: OpenTurn, nowMs: number, e: DistributiveOmit<TurnEffect, 'session_id' | 'turn_id' | 'generation'>): Step => ({
    state: withTurn(state, { ...turn, pending: { step: e.effect, since_ms: nowMs } }),
    outputs: [{ kind: 'effect', session_id: state.session_id as string, turn_id: turn.turn_id, generation: state.generation, ...e } as TurnReconcileOutput],
  });

  const command = (state: TurnReconcileState, turn: OpenTurn, idStep: string, command: TurnCommand): SendCommand => ({
    kind: 'command',
    session_id: state.session_id as string,
    command_id: reconcileCommandId(turn.turn_id, state.generation, idStep),
    command,
  });

  const settle = (state: TurnReconcileState, turn: OpenTurn, nowMs: number, verdict: SendCommand): Step => ({
    state: withTurn(state, { ...turn, pending: { step: 'settle', since_ms: nowMs, command: verdict } }),
    outputs: [verdict],
  });

  const recover = (state: TurnReconcileState, turn: OpenTurn, nowMs: number, method: 'replayed' | 'output_recovered' | 'transcript_recovered'): Step =>
    settle(state, turn, nowMs, command(state, turn, method, { type: 'RecoverTurn', data: { turn_id: turn.turn_id, method } }));

  const fail = (state: TurnReconcileState, turn: OpenTurn, nowMs: number, reason: TurnFailureReason, message: string): Step =>
    settle(state, turn, nowMs, command(state, turn, `fail_${reason}`, { type: 'FailTurn', data: { turn_id: turn.turn_id, reason, message } }));

  const probe = (state: TurnReconcileState, turn: OpenTurn, nowMs: number): Step => effect(state, turn, nowMs, { effect: 'probe' });

  /** Nothing to do yet: look again after the normal probe period. */
  const waitAndSee = (state: TurnReconcileState, turn: OpenTurn, nowMs: number): Step =>
    nothing(withTurn(state, { ...turn, pending: null, next_check_ms: nowMs + policy.probeAfterMs }));

  /**
   * A step that did not help: retry with a doubling delay (a restarting sandbox-manager or broker
   * gets a chance), or settle once the attempts are used up.
   */
  const failedAttempt = (state: TurnReconcileState, turn: OpenTurn, nowMs: number, why: string): Step => {
    const attempts = turn.attempts + 1;
    const next = { ...turn, attempts, pending: null, next_check_ms: nowMs + policy.retryAfterMs * 2 ** (attempts - 1) };
    if (attempts < policy.maxAttempts) return nothing(withTurn(state, next));
    const reason = state.sandbox === 'lost' ? 'sandbox_lost' : 'no_progress';
    return fail(state, next, nowMs, reason, `Recovery gave up after ${attempts} attempts: ${why}`);
  };

  const onTick = (state: TurnReconcileState, nowMs: number): Step => {
    const turn = activeTurn(state);
    if (!turn) return nothing(state);
    if (turn.pending) {
      if (nowMs - turn.pending.since_ms < policy.pendingTimeoutMs) return nothing(state);
      // The final verdict went unanswered (broker or kernel down): deliver it again, same id, until the
      // journal shows the turn settled. Earlier verdicts are re-derived from a fresh probe instead.
      if (turn.pending.step === 'settle' && turn.pending.command && turn.attempts >= policy.maxAttempts) {
        return settle(state, turn, nowMs, turn.pending.command);
      }
      return failedAttempt(state, turn, nowMs, `no answer to ${turn.pending.step} within ${policy.pendingTimeoutMs} ms`);
    }
    if (turn.awaiting_confirmation && state.sandbox !== 'lost') return nothing(state);
    if (nowMs < turn.next_check_ms) return nothing(state);
    return probe(state, turn, nowMs);
  };

  const onObserved = (state: TurnReconcileState, input: FactsObserved, nowMs: number): Step => {
    const turn = activeTurn(state);
    if (!turn || input.turn_id !== turn.turn_id || input.generation !== state.generation || turn.pending?.step !== 'probe') {
      return nothing(state);
    }
    return climb(state, { ...turn, unanswered_since_ms: null }, input.facts, nowMs);
  };

  /**
   * Nobody answered: ask again after the retry delay, without burning an attempt, until the
   * sandbox-manager has been silent for `unansweredMs` in a row.
   */
  const unanswered = (state: TurnReconcileState, turn: OpenTurn, nowMs: number, why: string): Step => {
    const since = turn.unanswered_since_ms ?? nowMs;
    const next = { ...turn, unanswered_since_ms: since, pending: null, next_check_ms: nowMs + policy.retryAfterMs };
    if (nowMs - since < policy.unansweredMs) return nothing(withTurn(state, next));
    return fail(state, next, nowMs, 'no_progress', `No sandbox-manager answered for ${Math.round((nowMs - since) / 1000)} s (last: ${why}).`);
  };

  const climb = (state: TurnReconcileState, turn: OpenTurn, f: ObservedFacts, nowMs: number): Step => {
    const output = f.output;
    // 1. The harness finished and everything it wrote is journaled: only the terminal is missing
    //    (unless the sandbox-manager still streams it: its own CompleteTurn is on the way).
    if (output?.complete && (output.last_offset === null || output.last_offset < turn.next_offset)) {
      return f.harness.attached && state.sandbox !== 'lost' ? waitAndSee(state, turn, nowMs) : recover(state, turn, nowMs, 'replayed');
    }
    // Once the journal records the sandbox as lost the kernel refuses its output (generation fence),
    // so neither reattaching nor re-reading its output file can help: straight to rung 4.
    const usable = state.sandbox !== 'lost';
    // 2. The harness still runs.
    if (usable && f.sandbox === 'running' && f.harness.alive) {
      if (!f.harness.attached) return effect(state, turn, nowMs, { effect: 'reattach', from_offset: turn.next_offset });
      if (nowMs - turn.last_progress_ms >= policy.stallMs) {
        return fail(state, turn, nowMs, 'no_progress', `The agent produced no output for ${Math.round((nowMs - turn.last_progress_ms) / 1000)} s.`);
      }
      return waitAndSee(state, turn, nowMs);
    }
    // 3. The harness finished inside the sandbox but its output never reached the journal.
    if (usable && output?.complete && f.sandbox !== 'missing') {
      return effect(state, turn, nowMs, { effect: 'recoverOutput', from_offset: turn.next_offset, through_offset: output.last_offset });
    }
    // A sandbox being created is not a lost one, for a bounded while.
    const mayStillStart =
      state.sandbox === 'starting' && state.sandbox_requested_ms !== null && nowMs - state.sandbox_requested_ms < policy.startupGraceMs;
    if (mayStillStart && f.sandbox !== 'running' && f.sandbox !== 'exited') return waitAndSee(state, turn, nowMs);

    // A harness the sandbox-manager is still starting is progress, not a lost input.
    if (usable && (f.sandbox === 'starting' || f.harness.alive)) return waitAndSee(state, turn, nowMs);

    // 4. The harness is gone with the turn unfinished.
    if (!turn.input_delivered && f.input_delivered !== true && turn.next_offset === 0) {
      // Only real evidence fails the input: two probes in a row, the turn silent for a full probe
      // period by our own clock, found no harness (one probe may land during harness start-up).
      const undelivered = turn.undelivered_probes + 1;
      const silentLongEnough = nowMs - turn.last_progress_ms >= policy.probeAfterMs;
      if (undelivered < 2 || !silentLongEnough) {
        return nothing(withTurn(state, { ...turn, undelivered_probes: undelivered, pending: null, next_check_ms: nowMs + policy.probeAfterMs }));
      }
      return fail(state, turn, nowMs, 'input_not_delivered', 'The message never reached the agent; send it again.');
    }
    if (f.transcript.present && f.transcript.bytes > 0) {
      const restore = effect(state, turn, nowMs, { effect: 'restoreTranscriptAndResume', transcript_bytes: f.transcript.bytes });
      if (turn.transcript_pending) return restore;
      const mark: TurnReconcileOutput = command(state, turn, 'transcript_pending', { type: 'MarkTranscriptPending', data: { turn_id: turn.turn_id } });
      return { state: restore.state, outputs: [mark, ...restore.outputs] };
    }
    const sandboxGone = f.sandbox === 'missing' || f.sandbox === 'exited' || state.sandbox === 'lost';
    return sandboxGone
      ? fail(state, turn, nowMs, 'sandbox_lost', 'The sandbox stopped during the turn and no transcript was saved to recover from.')
      : fail(state, turn, nowMs, 'harness_failed', 'The agent process stopped during the turn without finishing it.');
  };

  const onEffectSettled = (state: TurnReconcileState, input: EffectSettled, nowMs: number): Step => {
    const open = activeTurn(state);
    if (!open || input.turn_id !== open.turn_id || input.generation !== state.generation || open.pending?.step !== input.effect) {
      return nothing(state);
    }
    const why = `${input.effect} ${input.outcome}${input.message ? `: ${input.message}` : ''}`;
    if (input.outcome === 'unanswered') return unanswered(state, open, nowMs, why);
    return answered(state, { ...open, unanswered_since_ms: null }, input, nowMs, why);
  };

  const answered = (state: TurnReconcileState, turn: OpenTurn, input: EffectSettled, nowMs: number, why: string): Step => {
    switch (input.effect) {
      case 'probe':
        return failedAttempt(state, turn, nowMs, why);
      case 'reattach':
        // A reattach that "worked" counts as an attempt: only new output proves it held. One that
        // failed burns none: the harness is alive and can still finish (the sandbox-manager also
        // reattaches by itself when its turn delivery comes back), so look again one period later;
        // `stallMs` bounds how long a live but unheard harness is waited for.
        return input.outcome === 'done'
          ? nothing(withTurn(state, { ...turn, attempts: turn.attempts + 1, pending: null, next_check_ms: nowMs + policy.probeAfterMs }))
          : waitAndSee(state, turn, nowMs);
      case 'recoverOutput':
        return input.outcome === 'done' ? recover(state, turn, nowMs, 'output_recovered') : failedAttempt(state, turn, nowMs, why);
      case 'restoreTranscriptAndResume':
        if (input.outcome === 'done') return recover(state, turn, nowMs, 'transcript_recovered');
        if (input.outcome === 'impossible') {
          return fail(state, turn, nowMs, 'transcript_unrecoverable', `The transcript could not be restored${input.message ? `: ${input.message}` : '.'}`);
        }
        return failedAttempt(state, turn, nowMs, why);
    }
  };

  return {
    name: 'turn-reconciler',
    initialState: initialTurnReconcileState,
    decide: (input, state) => step(input, state).outputs,
    evolve: (state, input) => step(input, state).state,
  };
}
