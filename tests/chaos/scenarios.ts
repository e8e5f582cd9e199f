import { Subjects, type SessionCommand } from '@berth/contracts';
import { reply } from '@berth/testing';
import { DirectCommands } from './direct-commands';
import type { TurnEnd } from './driver';
import type { Scenario, ScenarioContext, ScenarioOutcome } from './run-scenario';
import { CRASH_POINTS, SERVICES, type ServiceName } from './supervisor';

const TURN_TIMEOUT_MS = 60_000;
/** Claude Code's turn: a Bash step that keeps the harness busy (the window in which faults land "mid-turn"), then a closing text. */
function scriptSlowTurn(ctx: ScenarioContext, stepSeconds: number): void {
  const step = { command: `sleep ${stepSeconds} && echo step-done`, description: 'a slow step' };
  ctx.model.script(reply.toolCall('Bash', step, { text: 'Running the slow step.' }), reply.text('The slow step is done.'));
}

type TurnFault = Readonly<{
  /** Before the session exists (arm a crash point that fires while its sandbox starts). */
  beforeSession?: (ctx: ScenarioContext) => Promise<void>;
  /** After the session exists, before the message (arm a crash point that fires during the turn). */
  beforeMessage?: (ctx: ScenarioContext, sessionId: string) => Promise<void>;
  /**
   * `tool_use`: inject once the harness's tool call is journaled (it is then inside its 2 s step);
   * `mirrored`: once, in addition, the harness transcript has been mirrored to the store.
   */
  trigger: 'sent' | 'tool_use' | 'mirrored';
  /** Injects the fault and brings the failed part back; null if the fault never happened. */
  inject: (ctx: ScenarioContext, sessionId: string) => Promise<Fault | null>;
}>;

/** When the fault happened and when the failed part was back (restarted, unlocked), ms. */
type Fault = Readonly<{ at: number; backAt: number }>;
const instant = (at = Date.now()): Fault => ({ at, backAt: at });

/**
 * The shape of most scenarios: a session, a slow Claude Code turn, a fault during it, then the turn
 * must settle (completed, failed with a reason, or recovered) and a next message must complete.
 */
async function turnUnderFault(ctx: ScenarioContext, outcome: ScenarioOutcome, fault: TurnFault): Promise<void> {
  const { driver } = ctx;
  await fault.beforeSession?.(ctx);
  const sessionId = await driver.newSession();
  await fault.beforeMessage?.(ctx, sessionId);
  // Waiting for a transcript mirror takes a moment of the step: give that variant a longer one.
  scriptSlowTurn(ctx, fault.trigger === 'mirrored' ? 5 : 2);
  const sent = await driver.send(sessionId, 'Run the slow step, then tell me when it is done.');
  const notInjected = async (problem: string) => {
    outcome.problems.push(problem);
    // The turn still has to settle: the invariants are checked over it all the same.
    await driver.waitForTurnEnd(sessionId, sent.turnId, TURN_TIMEOUT_MS);
  };
  if (fault.trigger !== 'sent' && !(await driver.waitForTurnEvent(sessionId, sent.turnId, 'AgentToolUseRecorded', TURN_TIMEOUT_MS))) {
    return notInjected('the turn never reached its tool call');
  }
  if (fault.trigger === 'mirrored' && !(await transcriptMirrored(ctx, sessionId, 4_000))) {
    return notInjected('no transcript was mirrored while the turn ran (4 s into a 5 s tool step)');
  }
  if (fault.trigger !== 'sent' && (await driver.waitForTurnEnd(sessionId, sent.turnId, 0)) !== null) {
    return notInjected('the turn had already ended when the fault was due: nothing was tested');
  }
  const injected = await fault.inject(ctx, sessionId);
  if (injected === null) {
    outcome.problems.push('the fault was never triggered (crash point not reached)');
  }
  const end = await driver.waitForTurnEnd(sessionId, sent.turnId, TURN_TIMEOUT_MS);
  if (end === null) {
    outcome.problems.push(`turn ${sent.turnId} did not settle within ${TURN_TIMEOUT_MS / 1000} s`);
    return;
  }
  outcome.notes.push(`turn ended ${describeEnd(end)}`);
  if (injected !== null) outcome.recoveries.push({ totalMs: Math.max(0, end.seenAt - injected.at), restartMs: injected.backAt - injected.at });
  await nextMessageWorks(ctx, outcome, sessionId);
}

/** After a fault, the session takes another message and completes that turn. */
async function nextMessageWorks(ctx: ScenarioContext, outcome: ScenarioOutcome, sessionId: string): Promise<void> {
  ctx.model.setDefaultReply(reply.text('Still here.'));
  const next = await ctx.driver.send(sessionId, 'Are you still there?');
  const end = await ctx.driver.waitForTurnEnd(sessionId, next.turnId, TURN_TIMEOUT_MS);
  if (end?.type !== 'TurnCompleted') outcome.problems.push(`the next message did not complete: ${describeEnd(end)}`);
}

const describeEnd = (end: TurnEnd | null): string =>
  end === null ? 'no terminal event' : `${end.type}${end.reason ? ` (${end.reason}${end.message ? `: ${end.message.slice(0, 300)}` : ''})` : ''}`;

/** Waits for `name` to die at its armed crash point, then starts it clean. */
async function dieAtCrashPoint(ctx: ScenarioContext, name: ServiceName, timeoutMs = 30_000): Promise<Fault | null> {
  const died = await ctx.sup.waitForDeath(name, timeoutMs);
  if (!died) return null;
  const at = Date.now();
  await ctx.sup.startService(name);
  return { at, backAt: Date.now() };
}

/** SIGKILLs `names` together and starts them again (the kernel first: it declares the streams). */
async function killAndRestart(ctx: ScenarioContext, names: readonly ServiceName[]): Promise<Fault> {
  const at = Date.now();
  await Promise.all(names.map((n) => ctx.sup.kill(n)));
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

const kernelCrash = (point: string): Scenario => ({
  name: `kill -9 session-kernel at ${point}`,
  run: (ctx, outcome) =>
    turnUnderFault(ctx, outcome, {
      trigger: 'tool_use',
      // Armed mid-turn: the next command the kernel commits (output, completion) kills it.
      inject: async ({ sup }) => {
        await sup.restart('session-kernel', { BERTH_CRASH_POINT: point });
        return dieAtCrashPoint(ctx, 'session-kernel');
      },
    }),
});

const managerCrash = (point: string): Scenario => ({
  name: `kill -9 sandbox-manager at ${point}`,
  run: (ctx, outcome) => {
    const arm = () => ctx.sup.restart('sandbox-manager', { BERTH_CRASH_POINT: point });
    return turnUnderFault(ctx, outcome, {
      // The sandbox starts when the session is created: arm before that for the start-up point.
      ...(point === 'after-sandbox-start-before-bind' ? { beforeSession: arm } : { beforeMessage: arm }),
      trigger: 'sent',
      inject: () => dieAtCrashPoint(ctx, 'sandbox-manager'),
    });
  },
});

const reconcilerCrash = (point: string): Scenario => ({
  name: `kill -9 turn-reconciler at ${point} (while it settles a turn)`,
  run: (ctx, outcome) =>
    turnUnderFault(ctx, outcome, {
      // The reconciler only sends commands for a turn nobody else settles: the manager dies after
      // the harness finished but before CompleteTurn and stays down, so the reconciler's probe
      // fails and (one attempt allowed, to reach its verdict in seconds) it sends FailTurn,
      // dying at its crash point on the way. Then it restarts plain (default timers) with the
      // manager, and the turn settles once.
      beforeMessage: async ({ sup }) => {
        await sup.restart('turn-reconciler', { BERTH_CRASH_POINT: point, BERTH_RECONCILE_MAX_ATTEMPTS: '1' });
        await sup.restart('sandbox-manager', { BERTH_CRASH_POINT: 'after-turn-end-before-complete' });
      },
      trigger: 'sent',
      inject: async ({ sup }) => {
        const managerDied = await sup.waitForDeath('sandbox-manager', 30_000);
        const reconcilerDied = managerDied && (await sup.waitForDeath('turn-reconciler', 30_000));
        const at = Date.now();
        await Promise.all([sup.startService('sandbox-manager'), sup.restart('turn-reconciler')]);
        return reconcilerDied ? { at, backAt: Date.now() } : null;
      },
    }),
});

const killService = (name: ServiceName): Scenario => ({
  name: `kill -9 ${name} mid-turn`,
  run: (ctx, outcome) =>
    turnUnderFault(ctx, outcome, {
      trigger: 'tool_use',
      inject: () => killAndRestart(ctx, [name]),
    }),
});

const everyServiceKilled: Scenario = {
  name: 'kill -9 every service mid-turn',
  run: (ctx, outcome) =>
    turnUnderFault(ctx, outcome, {
      trigger: 'tool_use',
      inject: () => killAndRestart(ctx, SERVICES),
    }),
};

const natsRestart: Scenario = {
  name: 'nats-server restart mid-turn',
  run: (ctx, outcome) =>
    turnUnderFault(ctx, outcome, {
      trigger: 'tool_use',
      inject: async ({ sup }) => {
        const at = Date.now();
        await sup.restartNats();
        return { at, backAt: Date.now() };
      },
    }),
};

const STORE_OUTAGE_MS = 6_000;
const storeOutage: Scenario = {
  name: `store write-locked ${STORE_OUTAGE_MS / 1000} s mid-turn`,
  run: (ctx, outcome) =>
    turnUnderFault(ctx, outcome, {
      trigger: 'tool_use',
      inject: async ({ sup }) => {
        const at = Date.now();
        await sup.storeOutage(STORE_OUTAGE_MS);
        return { at, backAt: Date.now() };
      },
    }),
};

const containerKilled = (when: 'tool_use' | 'mirrored'): Scenario => ({
  name: `docker kill of the sandbox mid-turn${when === 'mirrored' ? ', after a transcript mirror' : ', before any transcript mirror'}`,
  run: (ctx, outcome) =>
    turnUnderFault(ctx, outcome, {
      trigger: when,
      inject: async ({ sup }, sessionId) => {
        const name = await container(ctx, sessionId);
        if (name === null) return null;
        const at = Date.now();
        await sup.runtime.docker.getContainer(name).kill();
        return instant(at);
      },
    }),
});

const HOUR = 3_600_000;
const clockSkew: Scenario = {
  name: 'clock skew: manager +2 h, kernel -5 min mid-turn; lease expiry',
  run: async (ctx, outcome) => {
    await turnUnderFault(ctx, outcome, {
      trigger: 'tool_use',
      inject: async ({ sup }) => {
        sup.skewClock('sandbox-manager', 2 * HOUR);
        sup.skewClock('session-kernel', -5 * 60_000);
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

const meta = (sessionId: string, commandId: string, issuedAt: string) => ({ command_id: commandId, session_id: sessionId, actor: 'chaos', issued_at: issuedAt });
const message = (sessionId: string, commandId: string, turnId: string, text: string, issuedAt: string): SessionCommand =>
  ({ type: 'SubmitUserMessage', data: { turn_id: turnId, content: [{ type: 'text', text }] }, meta: meta(sessionId, commandId, issuedAt) }) as SessionCommand;

const duplicateAndReordered: Scenario = {
  name: 'duplicate and reordered delivery',
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
  ...CRASH_POINTS['turn-reconciler'].map(reconcilerCrash),
  killService('gateway'),
  everyServiceKilled,
  natsRestart,
  storeOutage,
  containerKilled('tool_use'),
  containerKilled('mirrored'),
  duplicateAndReordered,
  poisonMessage,
  clockSkew,
];
