import { isDeepStrictEqual } from 'node:util';
import { toPublicEvent, type RecordedEvent } from '@berth/contracts';
import { emptySessionView, foldSessionEvent } from '@berth/sandbox-workflow';

/**
 * A command the platform acknowledged: an HTTP 2xx (identified by the event the gateway echoed)
 * or a kernel outcome `ok` for a command the suite published itself (identified by command id).
 * `noopAllowed`: the acknowledgement itself said nothing new was recorded (a duplicate outcome,
 * an echo without an event id), so zero journal events for it is correct.
 */
export type AckedCommand = Readonly<{
  sessionId: string;
  label: string;
  eventId?: string | null;
  commandId?: string | null;
  noopAllowed?: boolean;
  /** A user message's text, unique in its session: it must be recorded exactly once (retries with its Idempotency-Key included). */
  text?: string;
}>;

/** One container an engine reports, as the sandbox-manager named and labelled it, and which engine (sandbox host) listed it. */
export type ContainerView = Readonly<{ name: string; labels: Readonly<Record<string, string>>; host?: string }>;

/**
 * How a turn ended, as a scenario states what it requires: `completed` (the harness finished the
 * turn: `TurnCompleted`, or `TurnRecovered` by replaying, reattaching or recovering its finished
 * output), `failed:<reason>`, or `recovered:transcript_recovered`.
 */
export type TurnOutcome = 'completed' | `failed:${string}` | `recovered:${string}`;

/** One thing the scripted model made the agent say or do, as the journal must record it. */
export type ExpectedOutput = Readonly<{ kind: 'text'; text: string }> | Readonly<{ kind: 'tool_use'; name: string }> | Readonly<{ kind: 'tool_result'; includes: string }>;

/**
 * A turn a scenario drove: the outcomes it allows, and the output its model server scripted (every
 * text, tool use and tool result, in order). A completed turn must hold exactly that output; any
 * other end a prefix of it (what ran before the loss, each once).
 */
export type TurnExpectation = Readonly<{ sessionId: string; turnId: string; allowed: readonly TurnOutcome[]; output: readonly ExpectedOutput[] }>;

export type InvariantInput = Readonly<{
  journals: ReadonlyMap<string, readonly RecordedEvent[]>;
  acked: readonly AckedCommand[];
  /** The turns the scenario drove and what each must end as (turns it did not state are only required to end). */
  expectations?: readonly TurnExpectation[];
  /** Per session: every frame an SSE client saw (duplicates across reconnects included). */
  sse: ReadonlyMap<string, readonly Readonly<{ seq: number; data: unknown }>[]>;
  /** The containers of every engine, each listed by that engine itself. */
  containers: readonly ContainerView[];
  /** The sandbox hosts the managers place on (`BERTH_SANDBOX_HOSTS` names); with more than one, every binding must name its host. */
  sandboxHosts?: readonly string[];
}>;

export type InvariantReport = Readonly<{
  violations: readonly string[];
  /** Acknowledged commands with no effect in the journal. */
  lost: number;
  /** Effects recorded more than once (an event id twice, a command applied twice). */
  duplicated: number;
  turns: number;
}>;

const TERMINAL = new Set(['TurnCompleted', 'TurnFailed', 'TurnRecovered']);
const SESSION_NAME = /^\/?berth-s-([A-Za-z0-9_-]{1,128})-g([1-9][0-9]*)$/;

/** Checks the chaos invariants over the journals, acknowledgements, turn expectations, SSE records and containers. */
export function checkInvariants(input: InvariantInput): InvariantReport {
  const violations: string[] = [];
  let lost = 0;
  let duplicated = 0;
  let turns = 0;

  for (const [sessionId, events] of input.journals) {
    violations.push(...gapFree(sessionId, events));
    const dups = duplicateEffects(sessionId, events);
    duplicated += dups.length;
    violations.push(...dups);
    const open = unsettledTurns(sessionId, events);
    turns += open.turns;
    violations.push(...open.violations);
  }

  for (const ack of input.acked) {
    const events = input.journals.get(ack.sessionId) ?? [];
    const effects = ack.eventId
      ? events.filter((e) => e.id === ack.eventId)
      : ack.commandId
        ? events.filter((e) => e.command_id === ack.commandId)
        : [];
    if (effects.length === 0 && !ack.noopAllowed) {
      lost++;
      violations.push(`${ack.sessionId}: acknowledged ${ack.label} (${ack.eventId ?? ack.commandId ?? 'no id'}) left nothing in the journal`);
    }
    if (ack.eventId && effects.length > 1) {
      violations.push(`${ack.sessionId}: acknowledged ${ack.label} recorded ${effects.length} times (event ${ack.eventId})`);
    }
    if (ack.text !== undefined) {
      const copies = events.filter((e) => e.type === 'UserMessageReceived' && textOf(e.data.content) === ack.text).length;
      if (copies > 1) {
        duplicated += copies - 1;
        violations.push(`${ack.sessionId}: the message ${JSON.stringify(ack.text.slice(0, 60))} was recorded ${copies} times`);
      }
    }
  }

  for (const expected of input.expectations ?? []) {
    const checked = turnMeetsExpectation(expected, input.journals.get(expected.sessionId) ?? []);
    lost += checked.lost;
    duplicated += checked.duplicated;
    violations.push(...checked.violations);
  }

  for (const [sessionId, frames] of input.sse) violations.push(...sseMatchesJournal(sessionId, frames, input.journals.get(sessionId) ?? []));
  violations.push(...sandboxesExclusive(input.journals, input.containers));
  violations.push(...bindingsOnTheirHosts(input.journals, input.containers, input.sandboxHosts ?? []));
  return { violations, lost, duplicated, turns };
}

const COMPLETED_RECOVERIES = new Set(['replayed', 'reattached', 'output_recovered']);

/** How the journal says a turn ended (null: it has not). */
export function turnOutcome(events: readonly RecordedEvent[], turnId: string): TurnOutcome | null {
  const end = events.find((e) => TERMINAL.has(e.type) && (e.data as { turn_id?: unknown }).turn_id === turnId);
  if (!end) return null;
  if (end.type === 'TurnFailed') return `failed:${end.data.reason}`;
  if (end.type === 'TurnRecovered') return COMPLETED_RECOVERIES.has(end.data.method) ? 'completed' : `recovered:${end.data.method}`;
  return 'completed';
}

type RecordedOutput = ExpectedOutput | Readonly<{ kind: 'tool_result'; text: string }>;

const textOf = (content: readonly Readonly<Record<string, unknown>>[]): string => content.map((b) => (typeof b.text === 'string' ? b.text : '')).join('');

/** The turn's texts, tool uses and tool results, in journal order. */
function outputsOf(events: readonly RecordedEvent[], turnId: string): RecordedOutput[] {
  const out: RecordedOutput[] = [];
  for (const e of events) {
    if ((e.data as { turn_id?: unknown }).turn_id !== turnId) continue;
    if (e.type === 'AgentMessageRecorded') out.push({ kind: 'text', text: textOf(e.data.content) });
    else if (e.type === 'AgentToolUseRecorded') out.push({ kind: 'tool_use', name: e.data.name });
    else if (e.type === 'AgentToolResultRecorded') out.push({ kind: 'tool_result', text: textOf(e.data.content) });
  }
  return out;
}

const matches = (expected: ExpectedOutput, actual: RecordedOutput): boolean =>
  expected.kind === actual.kind &&
  (expected.kind === 'text'
    ? expected.text === (actual as { text: string }).text
    : expected.kind === 'tool_use'
      ? expected.name === (actual as { name: string }).name
      : (actual as { text: string }).text.includes(expected.includes));

const describeOutput = (o: RecordedOutput | ExpectedOutput): string =>
  o.kind === 'tool_use' ? `tool_use ${o.name}` : o.kind === 'tool_result' ? `tool_result ${'includes' in o ? `~${JSON.stringify(o.includes)}` : JSON.stringify(o.text.slice(0, 60))}` : `text ${JSON.stringify(o.text.slice(0, 60))}`;

/** The turn ended as the scenario allows, with the scripted output: all of it when completed, a prefix otherwise; each once, in order. */
function turnMeetsExpectation(expected: TurnExpectation, events: readonly RecordedEvent[]): { violations: string[]; lost: number; duplicated: number } {
  const where = `${expected.sessionId}: turn ${expected.turnId}`;
  const outcome = turnOutcome(events, expected.turnId);
  const violations: string[] = [];
  if (outcome !== null && !expected.allowed.includes(outcome)) violations.push(`${where} ended ${outcome}; this scenario requires ${expected.allowed.join(' or ')}`);
  const actual = outputsOf(events, expected.turnId);
  const inOrder = actual.length <= expected.output.length && actual.every((a, i) => matches(expected.output[i], a));
  const complete = outcome !== 'completed' || actual.length === expected.output.length;
  if (inOrder && complete) return { violations, lost: 0, duplicated: 0 };
  // Count what is missing and what is extra against the script, whatever the order.
  const unmatched = [...actual];
  let lost = 0;
  for (const e of expected.output) {
    const at = unmatched.findIndex((a) => matches(e, a));
    if (at >= 0) unmatched.splice(at, 1);
    else if (outcome === 'completed') lost++;
  }
  const duplicated = unmatched.filter((a) => expected.output.some((e) => matches(e, a))).length;
  violations.push(
    `${where} (${outcome ?? 'not ended'}) recorded [${actual.map(describeOutput).join(', ')}], the model scripted [${expected.output.map(describeOutput).join(', ')}]` +
      (lost > 0 ? `; ${lost} lost` : '') +
      (duplicated > 0 ? `; ${duplicated} recorded twice` : '') +
      (lost === 0 && duplicated === 0 ? '; out of order or not scripted' : ''),
  );
  return { violations, lost, duplicated };
}

function gapFree(sessionId: string, events: readonly RecordedEvent[]): string[] {
  const seqs = events.map((e) => e.seq).sort((a, b) => a - b);
  for (let i = 0; i < seqs.length; i++) {
    if (seqs[i] !== i + 1) return [`${sessionId}: sequence is not gap-free from 1 (position ${i + 1} holds seq ${seqs[i]})`];
  }
  return [];
}

/** An event id recorded twice, or one command's events applied twice, is a duplicated effect. */
function duplicateEffects(sessionId: string, events: readonly RecordedEvent[]): string[] {
  const out: string[] = [];
  const byId = new Map<string, number[]>();
  for (const e of events) byId.set(e.id, [...(byId.get(e.id) ?? []), e.seq]);
  for (const [id, seqs] of byId) if (seqs.length > 1) out.push(`${sessionId}: event ${id} recorded ${seqs.length} times (seqs ${seqs.join(', ')})`);
  return out;
}

/** Every turn a message opened must end completed, failed with a named reason, or recovered. */
function unsettledTurns(sessionId: string, events: readonly RecordedEvent[]): { turns: number; violations: string[] } {
  const opened = new Set<string>();
  const settled = new Set<string>();
  const violations: string[] = [];
  for (const e of events) {
    const turnId = (e.data as { turn_id?: unknown }).turn_id;
    if (typeof turnId !== 'string') continue;
    if (e.type === 'UserMessageReceived' || e.type === 'TurnStarted') opened.add(turnId);
    if (TERMINAL.has(e.type)) settled.add(turnId);
    if (e.type === 'TurnFailed') {
      const { reason, message } = e.data as { reason?: unknown; message?: unknown };
      if (typeof reason !== 'string' || reason === '' || typeof message !== 'string' || message === '') {
        violations.push(`${sessionId}: turn ${turnId} failed without a named reason and message`);
      }
    }
  }
  for (const turnId of opened) if (!settled.has(turnId)) violations.push(`${sessionId}: turn ${turnId} never ended (no completed, failed or recovered event)`);
  return { turns: opened.size, violations };
}

/** Deduplicated by id, what the client saw must equal the journal's public events, in full. */
function sseMatchesJournal(sessionId: string, frames: readonly Readonly<{ seq: number; data: unknown }>[], journal: readonly RecordedEvent[]): string[] {
  const seen = new Map<number, unknown>();
  const out: string[] = [];
  for (const f of frames) {
    const before = seen.get(f.seq);
    if (before !== undefined && !isDeepStrictEqual(before, f.data)) out.push(`${sessionId}: SSE id ${f.seq} arrived twice with different bodies`);
    seen.set(f.seq, f.data);
  }
  const expected = new Map(journal.map((e) => [e.seq, toPublicEvent(e)] as const));
  for (const [seq, event] of expected) {
    if (!seen.has(seq)) out.push(`${sessionId}: SSE client never saw seq ${seq} (${String(event.type)})`);
    else if (!isDeepStrictEqual(JSON.parse(JSON.stringify(event)), seen.get(seq))) out.push(`${sessionId}: SSE seq ${seq} differs from the journal's public event`);
  }
  for (const seq of seen.keys()) if (!expected.has(seq)) out.push(`${sessionId}: SSE client saw seq ${seq}, which the journal does not hold`);
  return out;
}

/** A sandbox id bound in two sessions' journals, or a container whose name and labels disagree on its session. */
function sandboxesExclusive(journals: ReadonlyMap<string, readonly RecordedEvent[]>, containers: readonly ContainerView[]): string[] {
  const out: string[] = [];
  const owners = new Map<string, Set<string>>();
  for (const [sessionId, events] of journals) {
    for (const e of events) {
      if (e.type !== 'SandboxBound') continue;
      const id = (e.data as { sandbox_id: string }).sandbox_id;
      owners.set(id, (owners.get(id) ?? new Set()).add(sessionId));
    }
  }
  for (const [id, sessions] of owners) if (sessions.size > 1) out.push(`sandbox ${id} was bound to ${sessions.size} sessions: ${[...sessions].join(', ')}`);
  for (const c of containers) {
    const named = SESSION_NAME.exec(c.name);
    const labelled = c.labels['berth.session'];
    if (named && labelled !== undefined && labelled !== named[1]) {
      out.push(`container ${c.name} is labelled for session ${labelled} but named for session ${named[1]}`);
    }
    if (named) {
      const bound = owners.get(c.name.replace(/^\//, ''));
      if (bound && !bound.has(named[1])) out.push(`container ${c.name} serves session ${named[1]} but was bound to ${[...bound].join(', ')}`);
    }
  }
  return out;
}

const bareName = (c: ContainerView): string => c.name.replace(/^\//, '');
type Binding = Readonly<{ sandbox_id: string; generation: number; host?: string }>;

/**
 * Bindings and containers across sandbox hosts (each engine's containers as that engine lists
 * them): no sandbox name on two engines; with several hosts every binding names a known host; one
 * (session, generation) never bound to two sandboxes or on two hosts; and a session's current
 * binding is a container of that name on the host the binding names — nothing released it, so a
 * missing one was taken by another session (one warm container handed to two sessions by two
 * managers: the second rename takes it from the first) or started on another engine than recorded.
 */
function bindingsOnTheirHosts(journals: ReadonlyMap<string, readonly RecordedEvent[]>, containers: readonly ContainerView[], hosts: readonly string[]): string[] {
  const out: string[] = [];
  const hostsOf = new Map<string, Set<string>>();
  for (const c of containers) if (c.host !== undefined) hostsOf.set(bareName(c), (hostsOf.get(bareName(c)) ?? new Set()).add(c.host));
  for (const [name, on] of hostsOf) if (on.size > 1) out.push(`container ${name} exists on ${on.size} sandbox hosts: ${[...on].sort().join(', ')}`);
  for (const [sessionId, events] of journals) {
    const bound = new Map<number, Binding>();
    for (const e of events) {
      if (e.type !== 'SandboxBound') continue;
      const binding = e.data as Binding;
      if (hosts.length > 1 && (binding.host === undefined || !hosts.includes(binding.host))) {
        out.push(`session ${sessionId}: sandbox ${binding.sandbox_id} was bound ${binding.host === undefined ? 'without a host' : `on host ${binding.host}`}, with sandbox hosts ${hosts.join(', ')}`);
      }
      const before = bound.get(binding.generation);
      if (before !== undefined && (before.sandbox_id !== binding.sandbox_id || before.host !== binding.host)) {
        out.push(`session ${sessionId}: generation ${binding.generation} was bound twice: ${describeBinding(before)}, then ${describeBinding(binding)}`);
      }
      bound.set(binding.generation, binding);
    }
    const current = events.reduce(foldSessionEvent, emptySessionView()).sandbox;
    if (current === null) continue;
    const host = bound.get(current.generation)?.host;
    const there = containers.filter((c) => bareName(c) === current.sandbox_id);
    if (there.length === 0) out.push(`session ${sessionId} is bound to ${current.sandbox_id}, which no container is named any more (handed to another session?)`);
    else if (host !== undefined && !there.some((c) => c.host === host)) {
      out.push(`session ${sessionId} is bound to ${current.sandbox_id} on host ${host}, but that container is on ${there.map((c) => c.host ?? 'an unnamed host').join(', ')}`);
    }
  }
  return out;
}

const describeBinding = (b: Binding): string => `${b.sandbox_id}${b.host === undefined ? '' : ` on ${b.host}`}`;
