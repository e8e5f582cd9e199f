import type { EventType, RecordedEvent } from '@berth/contracts';
import type { SendCommand, TurnEffectName } from './outputs';

/**
 * A step the reconciler asked for and has not heard back about. `settle`: a terminal command was
 * sent (kept, so the final verdict can be resent with the same id until the journal shows it).
 */
export type Pending = Readonly<{ step: TurnEffectName | 'settle'; since_ms: number; command?: SendCommand }>;

/** The session's open turn as the reconciler sees it (at most one turn runs per session). */
export type OpenTurn = Readonly<{
  turn_id: string;
  /** Offset the next output will have: every output before it is in the journal. */
  next_offset: number;
  /** The journal proves the harness saw the input (it produced output or reported its session). */
  input_delivered: boolean;
  /** Waiting for `user.tool_confirmation`: silence is expected, only a lost sandbox matters. */
  awaiting_confirmation: boolean;
  transcript_pending: boolean;
  last_progress_ms: number;
  /** When the sweep next looks at this turn (probe due). */
  next_check_ms: number;
  /** Unsuccessful steps since the last progress. */
  attempts: number;
  /** Probes in a row (since the last progress) that found the harness never started. */
  undelivered_probes: number;
  /** Since when no sandbox-manager has answered the reconciler (null while one answers). */
  unanswered_since_ms: number | null;
  pending: Pending | null;
}>;

/** The session's sandbox, from the journal: requested (starting), bound, or lost. */
export type SandboxPhase = 'none' | 'starting' | 'bound' | 'lost';

export type TurnReconcileState = Readonly<{
  session_id: string | null;
  /** Highest journal seq folded: a redelivered or replayed event at or below it changes nothing. */
  last_seq: number;
  /** The session's current sandbox generation (0 before any was requested). */
  generation: number;
  sandbox: SandboxPhase;
  sandbox_requested_ms: number | null;
  deleted: boolean;
  turn: OpenTurn | null;
}>;

export const initialTurnReconcileState = (): TurnReconcileState => ({
  session_id: null,
  last_seq: 0,
  generation: 0,
  sandbox: 'none',
  sandbox_requested_ms: null,
  deleted: false,
  turn: null,
});

/**
 * When an event counts as progress: when the reconciler received it, by its own clock. `occurred_at`
 * comes from another process's clock (a skewed kernel would make a new turn look silent at once or
 * postpone every probe), so it is for display only, never for timing.
 */
const progressTime = (_event: RecordedEvent, nowMs: number): number => nowMs;

const progressed = (turn: OpenTurn, atMs: number, probeAfterMs: number, offset?: number): OpenTurn => ({
  ...turn,
  next_offset: offset === undefined ? turn.next_offset : Math.max(turn.next_offset, offset + 1),
  last_progress_ms: Math.max(turn.last_progress_ms, atMs),
  next_check_ms: Math.max(turn.last_progress_ms, atMs) + probeAfterMs,
  attempts: 0,
  undelivered_probes: 0,
  unanswered_since_ms: null,
  // New output answers a probe or a reattach; a recovery in flight produces output itself and still
  // has to report back (its result settles the turn).
  pending: turn.pending?.step === 'probe' || turn.pending?.step === 'reattach' ? null : turn.pending,
});

/**
 * The sandbox is gone: the open turn is due at the next sweep (which reads the journal first, so it
 * decides on the whole commit, e.g. the loss and the transcript-pending mark together). Whatever was
 * asked of the old sandbox is moot, except a transcript restore or a terminal already on its way.
 */
const lose = (s: TurnReconcileState, atMs: number): TurnReconcileState => {
  if (s.sandbox === 'lost') return s;
  const turn = s.turn;
  if (!turn) return { ...s, sandbox: 'lost' };
  const keep = turn.pending?.step === 'settle' || turn.pending?.step === 'restoreTranscriptAndResume';
  return { ...s, sandbox: 'lost', turn: { ...turn, next_check_ms: Math.min(turn.next_check_ms, atMs), pending: keep ? turn.pending : null } };
};

/** Folds one journal event into the reconciler's view of the session. Events of other turns leave the turn alone. */
export function foldEvent(state: TurnReconcileState, event: RecordedEvent, nowMs: number, probeAfterMs: number): TurnReconcileState {
  if (event.seq <= state.last_seq) return state;
  const s: TurnReconcileState = { ...state, session_id: event.session_id, last_seq: event.seq };
  const at = progressTime(event, nowMs);
  const ofTurn = (turnId: string): OpenTurn | null => (s.turn && s.turn.turn_id === turnId ? s.turn : null);

  switch (event.type) {
    case 'TurnStarted':
      return {
        ...s,
        turn: {
          turn_id: event.data.turn_id,
          next_offset: 0,
          input_delivered: false,
          awaiting_confirmation: false,
          transcript_pending: false,
          last_progress_ms: at,
          next_check_ms: at + probeAfterMs,
          attempts: 0,
          undelivered_probes: 0,
          unanswered_since_ms: null,
          pending: null,
        },
      };
    case 'AgentMessageRecorded':
    case 'AgentThinkingRecorded':
    case 'AgentToolUseRecorded':
    case 'AgentToolResultRecorded':
    case 'AgentMcpToolUseRecorded':
    case 'AgentMcpToolResultRecorded':
    case 'AgentCustomToolUseRecorded':
    case 'UsageRecorded': {
      const turn = ofTurn(event.data.turn_id);
      return turn ? { ...s, turn: { ...progressed(turn, at, probeAfterMs, event.data.offset), input_delivered: true } } : s;
    }
    case 'HarnessSessionRecorded': {
      const turn = ofTurn(event.data.turn_id);
      return turn ? { ...s, turn: { ...progressed(turn, at, probeAfterMs), input_delivered: true } } : s;
    }
    case 'TurnAwaitingConfirmation': {
      const turn = ofTurn(event.data.turn_id);
      return turn ? { ...s, turn: { ...progressed(turn, at, probeAfterMs), awaiting_confirmation: true } } : s;
    }
    case 'ToolUseConfirmed':
    case 'TurnResumed': {
      const turn = ofTurn(event.data.turn_id);
      return turn ? { ...s, turn: { ...progressed(turn, at, probeAfterMs), awaiting_confirmation: false } } : s;
    }
    // One answer of several pending: the turn still waits (TurnResumed follows the last one).
    case 'CustomToolResultReceived': {
      const turn = ofTurn(event.data.turn_id);
      return turn ? { ...s, turn: progressed(turn, at, probeAfterMs) } : s;
    }
    case 'TurnTranscriptPending': {
      const turn = ofTurn(event.data.turn_id);
      return turn ? { ...s, turn: { ...turn, transcript_pending: true } } : s;
    }
    case 'TurnCompleted':
    case 'TurnFailed':
    case 'TurnRecovered':
      return ofTurn(event.data.turn_id) ? { ...s, turn: null } : s;
    // A sandbox starting or bound for the open turn is progress: the harness can only start after
    // it, and whatever we asked about the previous generation is moot.
    case 'SandboxRequested':
      return {
        ...s,
        generation: Math.max(s.generation, event.data.generation),
        sandbox: 'starting',
        sandbox_requested_ms: at,
        turn: s.turn && progressed(s.turn, at, probeAfterMs),
      };
    case 'SandboxBound':
      return event.data.generation >= s.generation
        ? { ...s, generation: event.data.generation, sandbox: 'bound', turn: s.turn && progressed(s.turn, at, probeAfterMs) }
        : s;
    case 'SandboxStartFailed':
    case 'SandboxLost':
      return event.data.generation === s.generation ? lose(s, at) : s;
    case 'SessionTerminated':
      return s.sandbox === 'none' ? s : lose(s, at);
    case 'SessionDeleted':
      return { ...s, deleted: true, turn: null };
    default:
      return s;
  }
}

/** Events that only occur while a turn is open: seeing one for a session not tracked means "read its journal". */
export const OPEN_TURN_EVENT_TYPES: readonly EventType[] = [
  'TurnStarted',
  'AgentMessageRecorded',
  'AgentThinkingRecorded',
  'AgentToolUseRecorded',
  'AgentToolResultRecorded',
  'AgentMcpToolUseRecorded',
  'AgentMcpToolResultRecorded',
  'AgentCustomToolUseRecorded',
  'UsageRecorded',
  'HarnessSessionRecorded',
  'TurnAwaitingConfirmation',
  'ToolUseConfirmed',
  'CustomToolResultReceived',
  'TurnResumed',
  'TurnTranscriptPending',
];

/** The journal events the reconciler folds; everything else leaves its view unchanged. */
export const TURN_RECONCILE_EVENT_TYPES: readonly EventType[] = [
  ...OPEN_TURN_EVENT_TYPES,
  'TurnCompleted',
  'TurnFailed',
  'TurnRecovered',
  'SandboxRequested',
  'SandboxBound',
  'SandboxStartFailed',
  'SandboxLost',
  'SessionTerminated',
  'SessionDeleted',
];
