import type { EventData, EventType, RecordedEvent } from '@berth/contracts';
import type { ManagerInput } from '../inputs';

/** Builders for the workflow's inputs, so specs read as a session's story. */
export const SESSION = 'sesn_a';
export const TURN = 'turn_1';
export const SANDBOX = `berth-s-${SESSION}-g1`;
export const T0 = Date.parse('2026-01-01T00:00:00.000Z');
export const at = (ms: number): string => new Date(T0 + ms).toISOString();

/** A journal of one session: `event` folds (catching up), `deliver` is the SESSION_EVT delivery of the last one. */
export function journal() {
  let seq = 0;
  let last: RecordedEvent | null = null;
  const recorded = <T extends EventType>(type: T, data: EventData<T>): RecordedEvent => {
    seq += 1;
    last = { type, data, id: `sevt_${seq}`, session_id: SESSION, seq, schema_version: 1, command_id: `cmd_${seq}`, occurred_at: at(seq) } as unknown as RecordedEvent;
    return last;
  };
  const event = <T extends EventType>(type: T, data: EventData<T>): ManagerInput => ({ kind: 'event', event: recorded(type, data) });
  /** The delivery of the event folded last (its view was caught up first, as the shell does). */
  const delivered = (ms = 0, maybeActedOn = false): ManagerInput => {
    if (last === null) throw new Error('nothing folded yet');
    return { kind: 'delivered', event: last, maybe_acted_on: maybeActedOn, now: at(ms) };
  };
  return { event, delivered, lastId: () => last?.id ?? '', lastSeq: () => seq };
}

/** A session whose sandbox (generation 1) is bound. */
export function boundSession(permission: 'always_allow' | 'always_ask' = 'always_allow') {
  const j = journal();
  const history: ManagerInput[] = [
    j.event('SessionCreated', {
      owner_id: 'own_1',
      agent: { id: 'agent_1', version: 2 },
      environment_id: 'env_1',
      harness: 'claude-code',
      title: null,
      metadata: {},
      idempotency_key: null,
      permission_mode: permission,
    }),
    j.event('SandboxRequested', { generation: 1, reason: 'startup' }),
    j.event('SandboxBound', { sandbox_id: SANDBOX, generation: 1, expires_at: null, warm: false }),
  ];
  return { j, history };
}

/** The bound session with turn 1 started (its message and its TurnStarted folded, not delivered yet). */
export function startedTurn(permission: 'always_allow' | 'always_ask' = 'always_allow') {
  const { j, history } = boundSession(permission);
  history.push(
    j.event('UserMessageReceived', { turn_id: TURN, content: [{ type: 'text', text: 'write out.txt' }], queued: false }),
    j.event('TurnStarted', { turn_id: TURN }),
  );
  return { j, history };
}
