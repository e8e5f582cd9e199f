import type { RecordedEvent, TurnEffectReply, TurnProbeFacts } from '@berth/contracts';
import type { TurnEffectName } from './outputs';

/** A session event from SESSION_EVT (or read back from the journal), with the time it was observed. */
export type EventObserved = Readonly<{ kind: 'event'; event: RecordedEvent; now: string }>;

/** The periodic sweep: the only input that makes time pass. */
export type SweepTick = Readonly<{ kind: 'tick'; now: string }>;

/** The transcript mirror as the store holds it (gathered by the caller, outside the sandbox). */
export type TranscriptFacts = Readonly<{ present: boolean; bytes: number }>;

/** Everything the caller observed for one turn: the sandbox-manager's probe plus the transcript mirror. */
export type ObservedFacts = TurnProbeFacts & Readonly<{ transcript: TranscriptFacts }>;

/** Answer to a `probe` effect. `generation` is the generation the facts describe. */
export type FactsObserved = Readonly<{
  kind: 'observed';
  now: string;
  turn_id: string;
  generation: number;
  facts: ObservedFacts;
}>;

/**
 * How an effect ended (`probe` only ever fails here: its success is `observed`). `unanswered`: no
 * sandbox-manager answered in time (none running, one restarting or overloaded, the broker away),
 * which says nothing about the turn itself.
 */
export type EffectSettled = Readonly<{
  kind: 'effect_result';
  now: string;
  turn_id: string;
  generation: number;
  effect: TurnEffectName;
  outcome: TurnEffectReply['outcome'] | 'unanswered';
  message?: string;
}>;

export type TurnReconcileInput = EventObserved | SweepTick | FactsObserved | EffectSettled;
