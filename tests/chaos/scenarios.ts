import { PayloadLimits, Subjects, jsonBytes, type SessionCommand } from '@berth/contracts';
import { reply, type AnthropicMessagesServer } from '@berth/testing';
import { DirectCommands } from './direct-commands';
import type { ChaosDriver, TurnEnd } from './driver';
import type { ExpectedOutput, TurnOutcome } from './invariants';
import type { Scenario, ScenarioContext, ScenarioOutcome } from './run-scenario';
import { CRASH_POINTS, REPLICATED, SERVICES, type ServiceName } from './supervisor';

const TURN_TIMEOUT_MS = 60_000;
/** Sessions with a turn running during every fault (the first is the one a targeted fault hits). */
const LANES = 3;
/** How long a message sent during a fault is retried (same Idempotency-Key) before it counts as never acknowledged. */
const DURING_FAULT_RETRY_MS = 60_000;

/** Kernel, gateway, reconciler, broker, store faults: the turn completes with its whole output. */
const COMPLETED: readonly TurnOutcome[] = ['completed'];
/** Sandbox loss may also end the turn failed with its named reason, or recovered from the transcript mirror. */
const SANDBOX_LOSS: readonly TurnOutcome[] = ['completed', 'failed:sandbox_lost', 'recovered:transcript_recovered'];
/**
 * The engine takes every sandbox down, some before their harness read its message: that turn
 * fails `input_not_delivered` (the message never reached an agent; the user is asked to resend).
 */
const ENGINE_LOSS: readonly TurnOutcome[] = [...SANDBOX_LOSS, 'failed:input_not_delivered'];

const SLOW_PROMPT = 'Run the slow step, then tell me when it is done.';
const BEFORE_STEP = 'Running the slow step.';
const AFTER_STEP = 'The slow step is done.';
const STILL_HERE = 'Still here.';
/** What the slow turn's script makes the agent say and do, in order. */
const SLOW_OUTPUT: readonly ExpectedOutput[] = [
  { kind: 'text', text: BEFORE_STEP },
  // The model calls Claude Code's `Bash`; the session records the agent toolset's public name.
  { kind: 'tool_use', name: 'bash' },
  { kind: 'tool_result', includes: 'step-done' },
  { kind: 'text', text: AFTER_STEP },
];
const STILL_HERE_OUTPUT: readonly ExpectedOutput[] = [{ kind: 'text', text: STILL_HERE }];

/** One session of a scenario with its own scripted model: a slow Claude Code turn (a Bash step, the window in which faults land "mid-turn"), then "Still here." for every later turn. */
type Lane = Readonly<{ sessionId: string; model: AnthropicMessagesServer }>;

async function openLanes(ctx: ScenarioContext, count: number, stepSeconds: number): Promise<Lane[]> {
  const models = [ctx.model, ...(await Promise.all(Array.from({ length: count - 1 }, () => ctx.newModel())))];
  return Promise.all(
    models.map(async (model) => {
      const step = { command: `sleep ${stepSeconds} && echo step-done`, description: 'a slow step' };
      // Keyed by the prompt: a later turn never takes a reply the slow turn left unused (its sandbox lost).
      model.scriptFor(SLOW_PROMPT, reply.toolCall('Bash', step, { text: BEFORE_STEP }), reply.text(AFTER_STEP)).setDefaultReply(reply.text(STILL_HERE));
      return { sessionId: await ctx.driver.newSession(model.url), model };
    }),
  );
}

const expectTurn = (outcome: ScenarioOutcome, sessionId: string, turnId: string, allowed: readonly TurnOutcome[], output: readonly ExpectedOutput[]) =>
  outcome.expectations.push({ sessionId, turnId, allowed, output });

type TurnFault = Readonly<{
  /** Before the sessions exist (arm a crash point that fires while their sandboxes start). */
  beforeSession?: (ctx: ScenarioContext) => Promise<void>;
  /** After the sessions exist, before the messages (arm a crash point that fires during the turns). */
  beforeMessage?: (ctx: ScenarioContext, sessionId: string) => Promise<void>;
  /**
   * `tool_use`: inject once the first session's tool call is journaled (it is then inside its step);
   * `mirrored`: once, in addition, its harness transcript has been mirrored to the store.
   */
  trigger: 'sent' | 'tool_use' | 'mirrored';
  /** What the first session's turn must end as. */
  requires: readonly TurnOutcome[];
  /** What the other sessions' turns must end as (default: `requires`). */
  others?: readonly TurnOutcome[];
  /**
   * Injects the fault and brings the failed part back; calls `began` the moment the fault is on
   * (a message is then sent, retried until acknowledged); null if the fault never happened.
   */
  inject: (ctx: ScenarioContext, sessionId: string, began: () => void) => Promise<Fault | null>;
}>;

/** When the fault happened and when the failed part was back (restarted, unlocked), ms. */
type Fault = Readonly<{ at: number; backAt: number }>;
const instant = (at = Date.now()): Fault => ({ at, backAt: at });

/**
 * The shape of most scenarios: several sessions, each running a slow Claude Code turn; a fault
 * during them; a user message sent to the second session while the fault lasts (retried with its
 * Idempotency-Key until acknowledged); then every turn must end as the scenario requires, with the
 * output its model scripted, and a next message on the first session must complete.
 */
async function turnUnderFault(ctx: ScenarioContext, outcome: ScenarioOutcome, fault: TurnFault): Promise<void> {
  const { driver } = ctx;
  await fault.beforeSession?.(ctx);
  // Waiting for a transcript mirror takes a moment of the step: give that variant a longer one.
  const lanes = await openLanes(ctx, LANES, fault.trigger === 'mirrored' ? 5 : 2);
  const [target] = lanes;
  await fault.beforeMessage?.(ctx, target.sessionId);
  const sent = await Promise.all(lanes.map((lane) => driver.send(lane.sessionId, SLOW_PROMPT)));
  sent.forEach((m, i) => expectTurn(outcome, m.sessionId, m.turnId, i === 0 ? fault.requires : (fault.others ?? fault.requires), SLOW_OUTPUT));
  const allEnded = () => Promise.all(sent.map((m) => driver.waitForTurnEnd(m.sessionId, m.turnId, TURN_TIMEOUT_MS)));
  const notInjected = async (problem: string) => {
    outcome.problems.push(problem);
    // The turns still have to settle: the invariants are checked over them all the same.
    await allEnded();
  };
  const first = sent[0];
  if (fault.trigger !== 'sent' && !(await driver.waitForTurnEvent(first.sessionId, first.turnId, 'AgentToolUseRecorded', TURN_TIMEOUT_MS))) {
    return notInjected('the turn never reached its tool call');
  }
  if (fault.trigger === 'mirrored' && !(await transcriptMirrored(ctx, first.sessionId, 4_000))) {
    return notInjected('no transcript was mirrored while the turn ran (4 s into a 5 s tool step)');
  }
  if (fault.trigger !== 'sent' && (await driver.waitForTurnEnd(first.sessionId, first.turnId, 0)) !== null) {
    return notInjected('the turn had already ended when the fault was due: nothing was tested');
  }
  const during: { message: ReturnType<ChaosDriver['sendRetrying']> | null } = { message: null };
  const began = () => {
    during.message ??= driver.sendRetrying(lanes[1].sessionId, `A message sent during the fault to ${lanes[1].sessionId}.`, DURING_FAULT_RETRY_MS);
  };
  const injected = await fault.inject(ctx, first.sessionId, began);
  if (injected === null) outcome.problems.push('the fault was never triggered (crash point not reached)');
  const ends = await allEnded();
  ends.forEach((end, i) => {
    if (end === null) outcome.problems.push(`turn ${sent[i].turnId} of ${sent[i].sessionId} did not settle within ${TURN_TIMEOUT_MS / 1000} s`);
  });
  const end = ends[0];
  if (end !== null) {
    outcome.notes.push(`turns ended ${ends.map(describeEnd).join(' / ')}`);
    if (injected !== null) outcome.recoveries.push({ totalMs: Math.max(0, end.seenAt - injected.at), restartMs: injected.backAt - injected.at });
  }
  if (during.message === null && injected !== null) outcome.problems.push('the fault never signalled its start: no message was sent during it');
  await Promise.all([
    during.message?.then((m) => queuedMessageCompletes(ctx, outcome, m)),
    end === null ? undefined : nextMessageWorks(ctx, outcome, target.sessionId),
  ]);
}

/** The message sent during the fault was acknowledged (after however many attempts), and its turn completes. */
async function queuedMessageCompletes(ctx: ScenarioContext, outcome: ScenarioOutcome, sent: Awaited<ReturnType<ChaosDriver['sendRetrying']>>): Promise<void> {
  if (sent === null) {
    outcome.problems.push(`the message sent during the fault was not acknowledged within ${DURING_FAULT_RETRY_MS / 1000} s of retries`);
    return;
  }
  outcome.notes.push(`message during the fault acknowledged after ${sent.attempts} attempt(s)${sent.refusals.length ? ` (before: ${sent.refusals.join(', ')})` : ''}`);
  // While a part is down the API may ask the client to retry (503, 504), never fail it with an internal error.
  const internal = sent.refusals.filter((r) => r.startsWith('500') || r === 'a body that is not JSON');
  if (internal.length > 0) outcome.problems.push(`during the fault the gateway answered ${internal.join(', ')}: an internal error, not a retryable one`);
  expectTurn(outcome, sent.sessionId, sent.turnId, COMPLETED, STILL_HERE_OUTPUT);
  const end = await ctx.driver.waitForTurnEnd(sent.sessionId, sent.turnId, TURN_TIMEOUT_MS);
  if (end === null) outcome.problems.push(`the turn of the message sent during the fault did not settle within ${TURN_TIMEOUT_MS / 1000} s`);
}

/** After a fault, the session takes another message and completes that turn. */
async function nextMessageWorks(ctx: ScenarioContext, outcome: ScenarioOutcome, sessionId: string): Promise<void> {
  const next = await ctx.driver.send(sessionId, 'Are you still there?');
  expectTurn(outcome, sessionId, next.turnId, COMPLETED, STILL_HERE_OUTPUT);
  const end = await ctx.driver.waitForTurnEnd(sessionId, next.turnId, TURN_TIMEOUT_MS);
  if (end?.type !== 'TurnCompleted') outcome.problems.push(`the next message did not complete: ${describeEnd(end)}`);
}

const describeEnd = (end: TurnEnd | null): string =>
  end === null ? 'no terminal event' : `${end.type}${end.reason ? ` (${end.reason}${end.message ? `: ${end.message.slice(0, 300)}` : ''})` : ''}`;

/** Waits for `name` to die at its armed crash point, then starts it clean. */
async function dieAtCrashPoint(ctx: ScenarioContext, name: ServiceName, began: () => void, timeoutMs = 30_000): Promise<Fault | null> {
  const died = await ctx.sup.waitForDeath(name, timeoutMs);
  if (!died) return null;
  const at = Date.now();
  began();
  await ctx.sup.startService(name);
  return { at, backAt: Date.now() };
}

/** SIGKILLs `names` together and starts them again (the kernel first: it declares the streams). */
async function killAndRestart(ctx: ScenarioContext, names: readonly ServiceName[], began: () => void): Promise<Fault> {
  const at = Date.now();
  await Promise.all(names.map((n) => ctx.sup.kill(n)));
  began();
  if (names.includes('session-kernel')) await ctx.sup.startService('session-kernel');
  await Promise.all(names.filter((n) => n !== 'session-kernel').map((n) => ctx.sup.startService(n)));
  return { at, backAt: Date.now() };
}

async function transcriptMirrored(ctx: ScenarioContext, sessionId: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while ((await ctx.driver.store.transcripts.files(sessionId)).length === 0) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

const container = async (ctx: ScenarioContext, sessionId: string): Promise<string | null> => {
  const events = await ctx.driver.journal(sessionId);
  const bound = events.filter((e) => e.type === 'SandboxBound').at(-1);
  return bound?.type === 'SandboxBound' ? bound.data.sandbox_id : null;
};

/** A fault injected mid-turn (the first session's tool use journaled) under which every turn must complete with its whole output. */
const completesMidTurn = (name: string, inject: TurnFault['inject']): Scenario => ({
  name,
  requires: 'every turn completed with its whole output',
  run: (ctx, outcome) => turnUnderFault(ctx, outcome, { trigger: 'tool_use', requires: COMPLETED, inject }),
});

// Armed mid-turn: the next command the kernel commits (output, completion) kills it.
const kernelCrash = (point: string): Scenario =>
  completesMidTurn(`kill -9 session-kernel at ${point}`, async (ctx, _sessionId, began) => {
    await ctx.sup.restart('session-kernel', { BERTH_CRASH_POINT: point });
    return dieAtCrashPoint(ctx, 'session-kernel', began);
  });

const managerCrash = (point: string): Scenario => ({
  name: `kill -9 sandbox-manager at ${point}`,
  requires: 'every turn completed with its whole output',
  // This fault lands before the turns start: its recovery includes starting three sandboxes and
  // running a whole turn in each, on two cores.
  ...(point === 'after-sandbox-start-before-bind' ? { boundMs: 20_000 } : {}),
  run: (ctx, outcome) => {
    const arm = () => ctx.sup.restart('sandbox-manager', { BERTH_CRASH_POINT: point });
    return turnUnderFault(ctx, outcome, {
      // The sandbox starts when the session is created: arm before that for the start-up point.
      ...(point === 'after-sandbox-start-before-bind' ? { beforeSession: arm } : { beforeMessage: arm }),
      trigger: 'sent',
      requires: COMPLETED,
      inject: (_ctx, _sessionId, began) => dieAtCrashPoint(ctx, 'sandbox-manager', began),
    });
  },
});

const reconcilerCrash = (point: 'before-command' | 'after-command'): Scenario => ({
  name: `kill -9 turn-reconciler at ${point} (while it settles a turn)`,
  requires:
    point === 'before-command'
      ? 'every turn completed (replayed by the restarted reconciler, or finished by the restarted manager) or failed no_progress, with its output'
      : 'at least one turn failed no_progress (the verdict sent before the crash, applied once); every other turn completed or failed no_progress',
  run: async (ctx, outcome) => {
    await turnUnderFault(ctx, outcome, {
      // The reconciler only sends commands for a turn nobody else settles: the manager dies after
      // a harness finished but before CompleteTurn and stays down, so the reconciler's probes go
      // unanswered and (its patience cut to a second, to reach its verdict in seconds) it sends
      // FailTurn, dying at its crash point on the way. Then it restarts plain (default timers)
      // with the manager. A manager kept down past the reconciler's patience is a verdict, not a
      // loss: no_progress is the one failure allowed here.
      beforeMessage: async ({ sup }) => {
        await sup.restart('turn-reconciler', { BERTH_CRASH_POINT: point, BERTH_RECONCILE_UNANSWERED_MS: '1000' });
        await sup.restart('sandbox-manager', { BERTH_CRASH_POINT: 'after-turn-end-before-complete' });
      },
      trigger: 'sent',
      requires: ['completed', 'failed:no_progress'],
      inject: async ({ sup }, _sessionId, began) => {
        const managerDied = await sup.waitForDeath('sandbox-manager', 30_000);
        if (managerDied) began();
        const reconcilerDied = managerDied && (await sup.waitForDeath('turn-reconciler', 30_000));
        const at = Date.now();
        await Promise.all([sup.startService('sandbox-manager'), sup.restart('turn-reconciler')]);
        return reconcilerDied ? { at, backAt: Date.now() } : null;
      },
    });
    if (point === 'after-command') {
      const failed = [];
      for (const e of outcome.expectations) {
        const events = await ctx.driver.journal(e.sessionId);
        if (events.some((x) => x.type === 'TurnFailed' && x.data.turn_id === e.turnId && x.data.reason === 'no_progress')) failed.push(e.turnId);
      }
      if (failed.length === 0) outcome.problems.push('no turn carries the no_progress verdict the reconciler sent before it died: the verdict was lost');
    }
  },
});

const killService = (name: ServiceName): Scenario => completesMidTurn(`kill -9 ${name} mid-turn`, (ctx, _sessionId, began) => killAndRestart(ctx, [name], began));

const everyServiceKilled = completesMidTurn('kill -9 every service mid-turn', (ctx, _sessionId, began) => killAndRestart(ctx, SERVICES, began));

/**
 * Two replicas of every replicated service (docs/scale-out.md "Replicas"): the second ones start
 * before the sessions exist (so both sandbox-managers share the sessions' sandbox requests and the
 * warm pool, and both gateways serve the clients through the balancer); mid-turn the first of each
 * is SIGKILLed and not brought back while the turns run: the replicas carry them (the kernel's
 * redelivered commands, the manager reattaching to the running harness, the standby reconciler
 * taking the lease over, the SSE clients resuming on the other gateway).
 */
const replicasKilled: Scenario = {
  name: 'two replicas of every service, one of each killed mid-turn',
  requires: 'every turn completed with its whole output, carried by the surviving replicas',
  run: (ctx, outcome) => turnUnderFault(ctx, outcome, { beforeSession: startReplicas, trigger: 'tool_use', requires: COMPLETED, inject: killFirstReplicas() }),
};

const startReplicas = async ({ sup }: ScenarioContext): Promise<void> => {
  for (const name of REPLICATED) await sup.startReplica(name);
};

/** SIGKILLs the first of each replicated service (they stay down while the turns run); `alsoAt` adds to the fault before it counts as on. */
const killFirstReplicas =
  (alsoAt: (ctx: ScenarioContext, sessionId: string) => Promise<void> = async () => undefined): TurnFault['inject'] =>
  async (ctx, sessionId, began) => {
    const at = Date.now();
    await Promise.all([...REPLICATED.map((name) => ctx.sup.kill(name)), alsoAt(ctx, sessionId)]);
    began();
    return { at, backAt: at };
  };

/** The host a session's sandbox was bound on (`berth.sandbox_bound` host): its first binding, or its last. */
async function boundHost(ctx: ScenarioContext, sessionId: string, which: 'first' | 'last'): Promise<string | null> {
  const bindings = (await ctx.driver.journal(sessionId)).filter((e) => e.type === 'SandboxBound');
  const binding = which === 'first' ? bindings[0] : bindings.at(-1);
  return binding?.type === 'SandboxBound' ? (binding.data.host ?? null) : null;
}

/**
 * Two Docker engines and two replicas of every service: mid-turn the first of each service is
 * SIGKILLed (the engines stay up) and every turn must complete, on either engine, carried by the
 * surviving replicas. The managers place each new sandbox on the engine with the most free places,
 * so the three sessions land on both; a run whose sessions all landed on one engine tested nothing
 * across engines and fails.
 *
 * With `freeze`, the engine running the first session's sandbox is frozen at the same moment
 * (SIGSTOP of its dockerd: a host gone from the network, its containers running on): turns on it
 * may end with the loss of their sandbox (`host_lost`), turns on the other engine must complete,
 * and the first session's next message must bind on the engine that still answers. Here the
 * sessions may all be on the frozen engine (a freeze empties it: the next run's sessions all go
 * there); what crosses engines is the session moving to the other one.
 */
const twoEngines = (freeze: boolean): Scenario => ({
  name: freeze ? "two engines, two replicas of every service: one of each killed and the first session's engine frozen mid-turn" : 'two engines, two replicas of every service, one of each killed mid-turn',
  requires: freeze
    ? "turns on the frozen engine completed or ended with the loss of their sandbox, every other turn completed with its whole output; the first session's next message bound on the other engine and completed"
    : 'the sessions placed on both engines; every turn completed with its whole output, carried by the surviving replicas',
  run: async (ctx, outcome) => {
    const fault: { target: string | null; frozen: string | null } = { target: null, frozen: null };
    await turnUnderFault(ctx, outcome, {
      beforeSession: startReplicas,
      trigger: 'tool_use',
      requires: freeze ? ENGINE_LOSS : COMPLETED,
      inject: killFirstReplicas(async ({ sup }, sessionId) => {
        if (!freeze) return;
        const host = await boundHost(ctx, sessionId, 'first');
        const engine = sup.hosts.find((h) => h.name === host);
        if (engine === undefined) throw new Error(`the first session's sandbox is bound on no engine of the suite (${String(host)})`);
        await sup.freezeEngine(engine.name);
        Object.assign(fault, { target: sessionId, frozen: engine.name });
      }),
    });
    const placed = new Map<string, string | null>();
    for (const sessionId of ctx.driver.recorders.keys()) placed.set(sessionId, await boundHost(ctx, sessionId, 'first'));
    const onEngine = ctx.sup.hosts.map((h) => `${h.name} ${[...placed.values()].filter((p) => p === h.name).length}`);
    outcome.notes.push(`sessions placed: ${onEngine.join(', ')}`);
    if (!freeze) {
      const used = new Set(placed.values());
      if (ctx.sup.hosts.some((h) => !used.has(h.name))) outcome.problems.push(`nothing tested across engines: the sessions' sandboxes were placed ${onEngine.join(', ')}`);
      return;
    }
    const { target, frozen } = fault;
    if (target === null || frozen === null) return;
    // Only the frozen engine's turns may end with the loss of their sandbox.
    outcome.expectations.forEach((e, i) => {
      if (placed.get(e.sessionId) !== frozen) outcome.expectations[i] = { ...e, allowed: COMPLETED };
    });
    const rebound = await boundHost(ctx, target, 'last');
    if (rebound === frozen || rebound === null) outcome.problems.push(`the first session's next sandbox was bound on ${rebound ?? 'no host'}, not on the engine that answers (${frozen} was frozen)`);
  },
});

const natsRestart = completesMidTurn('nats-server restart mid-turn', async ({ sup }, _sessionId, began) => {
  const at = Date.now();
  began();
  await sup.restartNats();
  return { at, backAt: Date.now() };
});

const natsKilled = completesMidTurn('kill -9 nats-server mid-turn', async ({ sup }, _sessionId, began) => {
  const at = Date.now();
  await sup.crashNats(began);
  return { at, backAt: Date.now() };
});

const STORE_OUTAGE_MS = 6_000;
const storeOutage = completesMidTurn(`store write-locked ${STORE_OUTAGE_MS / 1000} s mid-turn`, async ({ sup }, _sessionId, began) => {
  const at = Date.now();
  const outage = sup.storeOutage(STORE_OUTAGE_MS);
  began();
  await outage;
  return { at, backAt: Date.now() };
});

const storeDiskFull = completesMidTurn(`store disk full ${STORE_OUTAGE_MS / 1000} s mid-turn`, async ({ sup }, _sessionId, began) => {
  let fullAt = Date.now();
  const { writesFailed } = await sup.diskFull(STORE_OUTAGE_MS, () => {
    fullAt = Date.now();
    began();
  });
  // A disk that filled but still took writes tested nothing.
  return writesFailed ? { at: fullAt, backAt: Date.now() } : null;
});

const containerKilled = (when: 'tool_use' | 'mirrored'): Scenario => ({
  name: `docker kill of the sandbox mid-turn${when === 'mirrored' ? ', after a transcript mirror' : ', before any transcript mirror'}`,
  requires:
    when === 'mirrored'
      ? "the first turn recovered from its transcript (or completed, or failed sandbox_lost); the other sessions' turns completed"
      : "the first turn failed sandbox_lost (or completed, or recovered from a transcript); the other sessions' turns completed",
  run: (ctx, outcome) =>
    turnUnderFault(ctx, outcome, {
      trigger: when,
      requires: SANDBOX_LOSS,
      others: COMPLETED,
      inject: async ({ sup }, sessionId, began) => {
        const name = await container(ctx, sessionId);
        if (name === null) return null;
        const at = Date.now();
        await sup.runtime.docker.getContainer(name).kill();
        began();
        return instant(at);
      },
    }),
});

/** Long enough that the message sent during the outage asks for its new sandbox while the engine is still down. */
const ENGINE_DOWN_MS = 6_000;
const engineRestart: Scenario = {
  name: `Docker engine down ${ENGINE_DOWN_MS / 1000} s mid-turn, then restarted`,
  requires:
    'every turn failed sandbox_lost (input_not_delivered if its harness had not read the message yet), recovered from its transcript, or completed (every sandbox stops with the engine); the message sent meanwhile waits for the engine and completes in a new sandbox',
  run: (ctx, outcome) =>
    turnUnderFault(ctx, outcome, {
      trigger: 'tool_use',
      requires: ENGINE_LOSS,
      inject: async ({ sup }, _sessionId, began) => {
        const at = Date.now();
        const { upAt } = await sup.restartEngine(began, ENGINE_DOWN_MS);
        return { at, backAt: upAt };
      },
    }),
};

const HOUR = 3_600_000;
const clockSkew: Scenario = {
  name: 'clock skew: manager +2 h, kernel -5 min mid-turn; lease expiry',
  requires: 'every turn completed with its whole output; the expired idle sandbox is reported and rebuilt by the next message',
  run: async (ctx, outcome) => {
    await turnUnderFault(ctx, outcome, {
      trigger: 'tool_use',
      requires: COMPLETED,
      inject: async ({ sup }, _sessionId, began) => {
        sup.skewClock('sandbox-manager', 2 * HOUR);
        sup.skewClock('session-kernel', -5 * 60_000);
        began();
        return instant();
      },
    });
    // An idle sandbox whose manager's clock jumps past its lease (30 min idle) is expired and
    // reported; the session rebuilds it on the next message (nextMessageWorks above ran first,
    // so jump again now that the sandbox is idle).
    const [sessionId] = ctx.driver.recorders.keys();
    const expired = (timeoutMs: number) =>
      ctx.driver.waitForJournal(sessionId, (events) => events.find((e) => e.type === 'SandboxLost' && e.data.cause === 'expired'), timeoutMs);
    let jumpedAt = Date.now();
    ctx.sup.skewClock('sandbox-manager', 4 * HOUR);
    // The manager renews the lease just after the turn's end is journaled; a jump read before
    // that renewal is renewed away, so jump once more (a clock past the lease must expire it).
    let lost = await expired(3_000);
    if (!lost) {
      outcome.notes.push('the first jump landed before the end-of-turn lease renewal; jumped again');
      jumpedAt = Date.now();
      ctx.sup.skewClock('sandbox-manager', 8 * HOUR);
      lost = await expired(7_000);
    }
    if (!lost) {
      const tail = (await ctx.driver.journal(sessionId)).slice(-4).map((e) => e.type);
      outcome.problems.push(`an idle sandbox past its lease (manager clock +4 h, then +8 h) was never reported expired (journal ends ${tail.join(', ')})`);
      return;
    }
    outcome.notes.push(`lease expiry reported ${Date.now() - jumpedAt} ms after the jump`);
    await nextMessageWorks(ctx, outcome, sessionId);
  },
};

const MB = 1024 * 1024;
const BIG_TOOL_OUTPUT_BYTES = 5 * MB;
const largePayloads: Scenario = {
  name: 'a 1 MB user message and a 5 MB tool output',
  requires:
    'the 5 MB tool output turn completed with its output (each recorded output under the payload limit); the 1 MB message refused 413 PAYLOAD_TOO_LARGE with nothing recorded; a 500 KB message completed and reached the model whole',
  run: async (ctx, outcome) => {
    const { driver, model } = ctx;
    model
      .script(
        reply.toolCall('Bash', { command: `head -c ${BIG_TOOL_OUTPUT_BYTES} /dev/zero | tr '\\0' x; echo; echo big-output-done`, description: 'a 5 MB output' }, { text: 'Making a big output.' }),
        reply.text('The big output is done.'),
      )
      .setDefaultReply(reply.text(STILL_HERE));
    const sessionId = await driver.newSession();
    const big = await driver.send(sessionId, 'Print five megabytes, then tell me you are done.');
    expectTurn(outcome, sessionId, big.turnId, COMPLETED, [
      { kind: 'text', text: 'Making a big output.' },
      { kind: 'tool_use', name: 'bash' },
      { kind: 'tool_result', includes: 'xxxxxxxxxx' },
      { kind: 'text', text: 'The big output is done.' },
    ]);
    if (!(await driver.waitForTurnEvent(sessionId, big.turnId, 'AgentToolUseRecorded', TURN_TIMEOUT_MS))) outcome.problems.push('the big-output turn never reached its tool call');

    // While it runs: a 1 MB message is refused at the edge, and nothing of it is recorded.
    const before = (await driver.journal(sessionId)).filter((e) => e.type === 'UserMessageReceived').length;
    const refused = await fetch(`${ctx.sup.gatewayUrl}/v1/sessions/${sessionId}/events`, {
      method: 'POST',
      headers: { 'x-api-key': ctx.sup.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ events: [{ type: 'user.message', content: [{ type: 'text', text: 'm'.repeat(MB) }] }] }),
    });
    const answer = (await refused.json()) as { error?: { code?: string } };
    if (refused.status !== 413 || answer.error?.code !== 'PAYLOAD_TOO_LARGE') outcome.problems.push(`a 1 MB message was answered ${refused.status} ${JSON.stringify(answer).slice(0, 200)}, not 413 PAYLOAD_TOO_LARGE`);
    // One under the limit goes through whole (queued behind the running turn).
    const largeText = `${'n'.repeat(500 * 1024)} (end of the large message)`;
    const large = await driver.send(sessionId, largeText);
    expectTurn(outcome, sessionId, large.turnId, COMPLETED, STILL_HERE_OUTPUT);

    for (const turnId of [big.turnId, large.turnId]) {
      const end = await driver.waitForTurnEnd(sessionId, turnId, TURN_TIMEOUT_MS);
      if (end === null) outcome.problems.push(`turn ${turnId} did not settle within ${TURN_TIMEOUT_MS / 1000} s`);
    }
    const events = await driver.journal(sessionId);
    if (events.filter((e) => e.type === 'UserMessageReceived').length !== before + 1) outcome.problems.push('the refused 1 MB message left something in the journal');
    const result = events.find((e) => e.type === 'AgentToolResultRecorded' && e.data.turn_id === big.turnId);
    if (result?.type === 'AgentToolResultRecorded') {
      const bytes = jsonBytes(result.data.content);
      outcome.notes.push(`the 5 MB tool output was recorded as ${bytes} bytes`);
      if (bytes > PayloadLimits.agentOutputBytes) outcome.problems.push(`a tool result of ${bytes} bytes was recorded, above the ${PayloadLimits.agentOutputBytes}-byte limit`);
    }
    if (!model.modelRequests.some((r) => JSON.stringify(r.body).includes('(end of the large message)') && JSON.stringify(r.body).includes('n'.repeat(500 * 1024)))) {
      outcome.problems.push('the 500 KB message never reached the model whole');
    }
  },
};

const meta = (sessionId: string, commandId: string, issuedAt: string) => ({ command_id: commandId, session_id: sessionId, actor: 'chaos', issued_at: issuedAt });
const message = (sessionId: string, commandId: string, turnId: string, text: string, issuedAt: string): SessionCommand =>
  ({ type: 'SubmitUserMessage', data: { turn_id: turnId, content: [{ type: 'text', text }] }, meta: meta(sessionId, commandId, issuedAt) }) as SessionCommand;

const duplicateAndReordered: Scenario = {
  name: 'duplicate and reordered delivery',
  requires: 'each command applied once (the redeliveries recorded no-ops); all three turns completed',
  run: async (ctx, outcome) => {
    const direct = await DirectCommands.connect(ctx.sup.nats);
    try {
      ctx.model.setDefaultReply(reply.text('OK.'));
      const sessionId = await ctx.driver.newSession();
      const stamp = Date.now().toString(36);
      // The same command three times: twice under one msgID (the broker drops the repeat), once
      // under a new msgID (the kernel must answer it as a duplicate, appending nothing).
      const a = message(sessionId, `cmd_dup${stamp}`, `turn_dup${stamp}`, 'once only', new Date().toISOString());
      await direct.publish(a, a.meta.command_id);
      const repeat = await direct.publish(a, a.meta.command_id);
      if (!repeat.duplicate) outcome.problems.push('the broker did not drop a repeat with the same msgID');
      await direct.publish(a, `${a.meta.command_id}.again`);
      const first = await direct.outcome(a.meta.command_id, 1);
      const second = await direct.outcome(a.meta.command_id, 2);
      if (first?.ok) ctx.driver.ackDirect({ sessionId, label: 'SubmitUserMessage (first delivery)', commandId: a.meta.command_id });
      else outcome.problems.push(`the first delivery was not accepted: ${JSON.stringify(first)}`);
      if (second?.ok) ctx.driver.ackDirect({ sessionId, label: 'SubmitUserMessage (new msgID)', commandId: a.meta.command_id, noopAllowed: second.duplicate });
      if (!second?.ok || !second.duplicate) outcome.problems.push(`a redelivery under a new msgID was not a no-op: ${JSON.stringify(second)}`);
      // Two commands of one session published out of order: the later-issued one first.
      const early = message(sessionId, `cmd_early${stamp}`, `turn_early${stamp}`, 'issued first', new Date(Date.now() - 1_000).toISOString());
      const late = message(sessionId, `cmd_late${stamp}`, `turn_late${stamp}`, 'issued second', new Date().toISOString());
      await direct.publish(late, late.meta.command_id);
      await direct.publish(early, early.meta.command_id);
      for (const c of [late, early]) {
        const o = await direct.outcome(c.meta.command_id);
        if (o?.ok) ctx.driver.ackDirect({ sessionId, label: `SubmitUserMessage ${c.meta.command_id}`, commandId: c.meta.command_id });
        else outcome.problems.push(`${c.meta.command_id} was not accepted: ${JSON.stringify(o)}`);
      }
      for (const turnId of [a.data, late.data, early.data].map((d) => (d as { turn_id: string }).turn_id)) {
        expectTurn(outcome, sessionId, turnId, COMPLETED, [{ kind: 'text', text: 'OK.' }]);
        const end = await ctx.driver.waitForTurnEnd(sessionId, turnId, TURN_TIMEOUT_MS);
        if (end?.type !== 'TurnCompleted') outcome.problems.push(`turn ${turnId} did not complete: ${describeEnd(end)}`);
      }
    } finally {
      await direct.close();
    }
  },
};

const poisonMessage: Scenario = {
  name: 'poison command on a session subject',
  requires: 'dead-lettered with a session.error in that session; turns on it and on another session completed',
  run: async (ctx, outcome) => {
    const direct = await DirectCommands.connect(ctx.sup.nats);
    try {
      ctx.model.setDefaultReply(reply.text('OK.'));
      const poisoned = await ctx.driver.newSession();
      const healthy = await ctx.driver.newSession();
      const subject = Subjects.command(poisoned, 'SubmitUserMessage');
      const at = Date.now();
      await direct.publishRaw(subject, new TextEncoder().encode('{"type":"SubmitUserMessage","data":'), `poison${at}`);
      const error = await ctx.driver.waitForJournal(poisoned, (events) => events.find((e) => e.type === 'SessionErrorRaised'), 15_000);
      if (!error) outcome.problems.push('the poisoned session got no session.error');
      else outcome.recoveries.push({ totalMs: Date.now() - at, restartMs: 0 });
      const dead = await direct.deadLetters(`dlq.session.${poisoned}.>`);
      if (dead < 1) outcome.problems.push('the poison message was not dead-lettered');
      else outcome.notes.push(`${dead} dead letter(s) for the poisoned session`);
      // Other sessions, and the poisoned one, carry on.
      for (const sessionId of [healthy, poisoned]) {
        const sent = await ctx.driver.send(sessionId, 'Hello after the poison');
        expectTurn(outcome, sessionId, sent.turnId, COMPLETED, [{ kind: 'text', text: 'OK.' }]);
        const end = await ctx.driver.waitForTurnEnd(sessionId, sent.turnId, TURN_TIMEOUT_MS);
        if (end?.type !== 'TurnCompleted') outcome.problems.push(`${sessionId === healthy ? 'the other' : 'the poisoned'} session's turn did not complete`);
      }
    } finally {
      await direct.close();
    }
  },
};

/** Every scenario, in the order the table prints them. */
export const SCENARIOS: readonly Scenario[] = [
  ...CRASH_POINTS['session-kernel'].map(kernelCrash),
  ...CRASH_POINTS['sandbox-manager'].map(managerCrash),
  reconcilerCrash('before-command'),
  reconcilerCrash('after-command'),
  killService('gateway'),
  everyServiceKilled,
  replicasKilled,
  natsRestart,
  natsKilled,
  storeOutage,
  storeDiskFull,
  containerKilled('tool_use'),
  containerKilled('mirrored'),
  engineRestart,
  largePayloads,
  duplicateAndReordered,
  poisonMessage,
  clockSkew,
];

/** The scenarios of the platform on two Docker engines (run on a platform of their own). */
export const TWO_ENGINE_SCENARIOS: readonly Scenario[] = [twoEngines(false), twoEngines(true)];
