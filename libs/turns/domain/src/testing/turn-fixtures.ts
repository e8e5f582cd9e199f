import type { EventData, EventType, RecordedEvent } from '@berth/contracts';
import type { EffectSettled, EventObserved, FactsObserved, ObservedFacts, SweepTick } from '../inputs';

/** Builders for the reconciler's inputs, so specs read as a session's story. */
export const SESSION = 'sesn_a';
export const TURN = 'turn_1';
export const T0 = Date.parse('2026-01-01T00:00:00.000Z');
export const at = (ms: number): string => new Date(T0 + ms).toISOString();

export function journal() {
  let seq = 0;
  const event = <T extends EventType>(type: T, data: EventData<T>, ms = 0): EventObserved => {
    seq += 1;
    const recorded = {
      type,
      data,
      id: `sevt_${seq}`,
      session_id: SESSION,
      seq,
      schema_version: 1,
      command_id: `cmd_${seq}`,
      occurred_at: at(ms),
    } as unknown as RecordedEvent;
    return { kind: 'event', event: recorded, now: at(ms) };
  };
  return { event };
}

export const tick = (ms: number): SweepTick => ({ kind: 'tick', now: at(ms) });

/** Facts of a healthy running turn; override what the scenario changes. */
export const facts = (over: Partial<ObservedFacts> = {}): ObservedFacts => ({
  sandbox: 'running',
  harness: { alive: true, attached: true },
  input_delivered: true,
  output: { complete: false, last_offset: null },
  transcript: { present: false, bytes: 0 },
  ...over,
});

export const observed = (ms: number, f: ObservedFacts, turn_id = TURN, generation = 1): FactsObserved => ({
  kind: 'observed',
  now: at(ms),
  turn_id,
  generation,
  facts: f,
});

export const settled = (
  ms: number,
  effect: EffectSettled['effect'],
  outcome: EffectSettled['outcome'],
  over: Partial<Pick<EffectSettled, 'turn_id' | 'generation' | 'message'>> = {},
): EffectSettled => ({ kind: 'effect_result', now: at(ms), turn_id: TURN, generation: 1, effect, outcome, ...over });
