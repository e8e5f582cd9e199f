import type { CommandData, CommandType } from '@berth/contracts';
import { commandFor, createSessionData } from '@berth/contracts/testing';
import { FixedClock } from '@berth/core/testing';
import { reconcilerMetrics } from '@berth/telemetry';
import { recordingLogger } from '@berth/testing';
import { defaultReconcilePolicy, type ReconcilePolicy } from '@berth/turns-domain';
import { Registry } from 'prom-client';
import { FakeKernel } from '../testing/fake-kernel';
import { FakeSandboxManager } from '../testing/fake-sandbox-manager';
import { InMemoryJournal } from '../testing/in-memory-journal';
import { InMemoryTranscripts } from '../testing/in-memory-transcripts';
import { TurnReconcilerService } from './turn-reconciler.service';

const SESSION = 'sesn_w';
const TURN = 'turn_1';

/**
 * The reconciler wired to in-memory ports: the real session decider behind a fake kernel (commands
 * deduplicated by id, events delivered like a bus), a scripted sandbox-manager and transcript
 * mirror. Time moves only by hand; sweeps run when a test says so.
 */
function platform(policy: Partial<ReconcilePolicy> = {}, fence?: () => boolean) {
  const clock = new FixedClock(new Date('2026-01-01T00:00:00.000Z'));
  const journal = new InMemoryJournal();
  const kernel = new FakeKernel(journal, clock);
  const transcripts = new InMemoryTranscripts();
  const sandboxManager = new FakeSandboxManager();
  const { log, lines: logs } = recordingLogger();
  const registry = new Registry();
  const metrics = reconcilerMetrics(registry);
  const newReconciler = () =>
    new TurnReconcilerService({
      fence,
      journal,
      transcripts,
      commands: kernel,
      sandboxManager,
      clock,
      policy: { ...defaultReconcilePolicy, ...policy },
      log,
      metrics,
    });
  const reconciler = newReconciler();
  kernel.subscribe((e) => reconciler.onEvent(e));

  let n = 0;
  const send = <T extends CommandType>(type: T, data: CommandData<T>) =>
    kernel.send(commandFor(type, SESSION, data, { command_id: `cmd_t${++n}`, issued_at: clock.now().toISOString() }));
  const output = (offset: number, text: string, turn_id = TURN, generation = 1) =>
    send('RecordAgentOutput', { turn_id, generation, offset, outputs: [{ kind: 'message', content: [{ type: 'text', text }] }], harness_session_id: null });

  /** Waits until neither the bus nor the reconciler has work in flight. */
  const quiet = async (service: TurnReconcilerService = reconciler) => {
    for (let i = 0; i < 20; i++) {
      await kernel.delivered();
      await service.settled();
      await kernel.delivered();
    }
  };
  const sweepAfter = async (ms: number, service: TurnReconcilerService = reconciler) => {
    clock.advance(ms);
    await service.sweep();
    await quiet(service);
  };

  /** A session on sandbox generation 1 whose turn 1 produced outputs 0 and 1. */
  const runningTurn = async () => {
    await send('CreateSession', createSessionData());
    await send('BindSandbox', { sandbox_id: 'sbx_1', generation: 1, expires_at: null, warm: true });
    await send('SubmitUserMessage', { turn_id: TURN, content: [{ type: 'text', text: 'hello' }] });
    await output(0, 'first');
    await output(1, 'second');
    await quiet();
  };

  const types = () => journal.all(SESSION).map((e) => e.type);
  const terminalOf = (turnId = TURN) =>
    journal
      .all(SESSION)
      .filter((e) => (e.type === 'TurnCompleted' || e.type === 'TurnFailed' || e.type === 'TurnRecovered') && e.data.turn_id === turnId)
      .map((e) => (e.type === 'TurnFailed' ? `TurnFailed(${e.data.reason})` : e.type === 'TurnRecovered' ? `TurnRecovered(${e.data.method})` : e.type));

  return { clock, journal, kernel, transcripts, sandboxManager, reconciler, newReconciler, logs, registry, send, output, quiet, sweepAfter, runningTurn, types, terminalOf };
}

describe('turn-reconciler service, wired to in-memory ports', () => {
  it('leaves a healthy turn alone: a probe of an attached, alive harness sends nothing', async () => {
    const p = platform();
    await p.runningTurn();
    await p.sweepAfter(6_000);
    expect(p.sandboxManager.queries()).toEqual(['probe']);
    expect(p.kernel.reconcilerCommands()).toEqual([]);
    expect(p.reconciler.openTurns()).toEqual([{ session_id: SESSION, turn_id: TURN, attempts: 0, waiting_for: null }]);
  });

  it('sandbox killed mid-turn with a transcript mirror: the turn is recovered from it and the next message runs', async () => {
    const p = platform();
    await p.runningTurn();
    await p.transcripts.append({ session_id: SESSION, path: 'projects/-work/h1.jsonl', offset: 0, data: '{"type":"user"}\n' });
    p.sandboxManager.facts = { sandbox: 'missing', harness: { alive: false, attached: false }, input_delivered: null, output: null };

    await p.send('ReportSandboxDied', { sandbox_id: 'sbx_1', generation: 1, cause: 'die', exit_code: 137 });
    await p.quiet();
    expect(p.sandboxManager.queries()).toEqual([]);

    // The next sweep (one interval later, not a silence threshold) acts; the kernel already marked
    // the turn transcript-pending with the loss, so no MarkTranscriptPending is sent.
    await p.sweepAfter(1_000);
    expect(p.sandboxManager.queries()).toEqual(['probe', 'restoreTranscript']);
    expect(p.sandboxManager.calls[1].request).toMatchObject({ session_id: SESSION, turn_id: TURN, generation: 1, transcript_bytes: 16 });
    expect(p.kernel.reconcilerCommands()).toEqual(['RecoverTurn(transcript_recovered)']);
    expect(p.terminalOf()).toEqual(['TurnRecovered(transcript_recovered)', 'TurnCompleted']);
    expect(p.reconciler.openTurns()).toEqual([]);

    await p.send('SubmitUserMessage', { turn_id: 'turn_2', content: [{ type: 'text', text: 'still there?' }] });
    expect(p.types().slice(-3)).toEqual(['SandboxRequested', 'UserMessageReceived', 'TurnStarted']);
  });

  it('fenced (the reconciler lease not held): it probes and sends nothing; once it holds the lease the next sweep settles the turn', async () => {
    let holds = false;
    const p = platform({}, () => holds);
    await p.runningTurn();
    p.sandboxManager.facts = { sandbox: 'missing', harness: { alive: false, attached: false }, input_delivered: null, output: null };
    await p.send('ReportSandboxDied', { sandbox_id: 'sbx_1', generation: 1, cause: 'oom', exit_code: 137 });

    await p.sweepAfter(1_000);
    await p.sweepAfter(6_000);
    expect(p.sandboxManager.queries()).toEqual([]);
    expect(p.kernel.reconcilerCommands()).toEqual([]);
    expect(p.logs.some((l) => l.message.includes('no longer holds the reconciler lease'))).toBe(true);

    holds = true;
    for (let i = 0; i < 5 && p.terminalOf().length === 0; i++) await p.sweepAfter(6_000);
    expect(p.terminalOf()).toEqual(['TurnFailed(sandbox_lost)']);
  });

  it('sandbox killed mid-turn without a transcript: the turn fails with sandbox_lost', async () => {
    const p = platform();
    await p.runningTurn();
    p.sandboxManager.facts = { sandbox: 'missing', harness: { alive: false, attached: false }, input_delivered: null, output: null };
    await p.send('ReportSandboxDied', { sandbox_id: 'sbx_1', generation: 1, cause: 'oom', exit_code: 137 });
    await p.sweepAfter(1_000);
    expect(p.terminalOf()).toEqual(['TurnFailed(sandbox_lost)']);
  });

  it('sandbox-manager crash mid-turn: the still-running harness is reattached from the next offset and the turn completes normally', async () => {
    const p = platform();
    await p.runningTurn();
    p.sandboxManager.facts = { sandbox: 'running', harness: { alive: true, attached: false }, input_delivered: true, output: { complete: false, last_offset: 1 } };
    p.sandboxManager.onReattach = async (request) => {
      // The restarted manager streams the rest of the output, then the harness finishes.
      p.sandboxManager.facts = { ...p.sandboxManager.facts, harness: { alive: true, attached: true } };
      await p.output(request.from_offset, 'third');
      await p.send('CompleteTurn', { turn_id: TURN, generation: 1, interrupted: false, harness_session_id: null });
    };

    await p.sweepAfter(4_000);
    expect(p.sandboxManager.queries()).toEqual([]);
    await p.sweepAfter(2_000);

    expect(p.sandboxManager.queries()).toEqual(['probe', 'reattach']);
    expect(p.sandboxManager.calls[1].request).toMatchObject({ from_offset: 2, generation: 1 });
    expect(p.kernel.reconcilerCommands()).toEqual([]);
    expect(p.terminalOf()).toEqual(['TurnCompleted']);
    expect(p.types().filter((t) => t === 'AgentMessageRecorded')).toHaveLength(3);
    expect(p.reconciler.openTurns()).toEqual([]);
  });

  it('harness finished while nobody listened: its output file is recovered, then the turn settles as output_recovered', async () => {
    const p = platform();
    await p.runningTurn();
    p.sandboxManager.facts = { sandbox: 'running', harness: { alive: false, attached: false }, input_delivered: true, output: { complete: true, last_offset: 3 } };
    p.sandboxManager.onRecoverOutput = async (request) => {
      for (let offset = request.from_offset; offset <= (request.through_offset ?? -1); offset++) await p.output(offset, `recovered ${offset}`);
    };

    await p.sweepAfter(6_000);

    expect(p.sandboxManager.queries()).toEqual(['probe', 'recoverOutput']);
    const messages = p.journal.all(SESSION).filter((e) => e.type === 'AgentMessageRecorded');
    expect(messages.map((e) => (e.type === 'AgentMessageRecorded' ? e.data.offset : -1))).toEqual([0, 1, 2, 3]);
    expect(p.terminalOf()).toEqual(['TurnRecovered(output_recovered)', 'TurnCompleted']);
  });

  it('input that never reached the harness fails as input_not_delivered, and resending it works', async () => {
    const p = platform();
    await p.send('CreateSession', createSessionData());
    await p.send('BindSandbox', { sandbox_id: 'sbx_1', generation: 1, expires_at: null, warm: true });
    await p.send('SubmitUserMessage', { turn_id: TURN, content: [{ type: 'text', text: 'hello' }] });
    await p.quiet();
    p.sandboxManager.facts = { sandbox: 'running', harness: { alive: false, attached: false }, input_delivered: false, output: null };

    await p.sweepAfter(6_000);
    expect(p.terminalOf()).toEqual([]); // one probe finding no harness may have landed during its start-up
    await p.sweepAfter(6_000);

    expect(p.terminalOf()).toEqual(['TurnFailed(input_not_delivered)']);
    await p.send('SubmitUserMessage', { turn_id: 'turn_2', content: [{ type: 'text', text: 'hello' }] });
    expect(p.types().slice(-2)).toEqual(['UserMessageReceived', 'TurnStarted']);
  });

  it('kernel crash between commit and publish: the sweep finds the terminal in the journal and sends nothing', async () => {
    const p = platform();
    await p.runningTurn();
    p.kernel.losePublishes = true;
    await p.send('CompleteTurn', { turn_id: TURN, generation: 1, interrupted: false, harness_session_id: null });
    p.kernel.losePublishes = false;
    p.sandboxManager.facts = { sandbox: 'running', harness: { alive: false, attached: false }, input_delivered: true, output: null };

    await p.sweepAfter(60_000);

    expect(p.sandboxManager.queries()).toEqual([]);
    expect(p.kernel.reconcilerCommands()).toEqual([]);
    expect(p.reconciler.openTurns()).toEqual([]);
  });

  it('reconciler crash: a new instance rebuilds open turns from the journal and settles them', async () => {
    const p = platform();
    await p.runningTurn();
    const restarted = p.newReconciler();
    expect(await restarted.hydrate({ sessionsWithTurns: async () => [SESSION, 'sesn_unknown'] })).toBe(1);
    p.sandboxManager.facts = { sandbox: 'exited', harness: { alive: false, attached: false }, input_delivered: true, output: { complete: false, last_offset: 1 } };

    await p.sweepAfter(6_000, restarted);

    expect(p.terminalOf()).toEqual(['TurnFailed(sandbox_lost)']);
  });

  it('two reconcilers reaching the same conclusion: the kernel applies it once', async () => {
    const p = platform();
    await p.runningTurn();
    const second = p.newReconciler();
    await second.hydrate({ sessionsWithTurns: async () => [SESSION] });
    p.sandboxManager.facts = { sandbox: 'missing', harness: { alive: false, attached: false }, input_delivered: true, output: null };

    p.clock.advance(6_000);
    await Promise.all([p.reconciler.sweep(), second.sweep()]);
    await p.quiet();
    await p.quiet(second);

    expect(p.kernel.reconcilerCommands()).toEqual(['FailTurn(sandbox_lost)', 'FailTurn(sandbox_lost)']);
    expect(new Set(p.kernel.received.filter((c) => c.meta.actor === 'turn-reconciler').map((c) => c.meta.command_id)).size).toBe(1);
    expect(p.terminalOf()).toEqual(['TurnFailed(sandbox_lost)']);
  });

  it('store outage: nothing is decided while the journal is unreadable; the turn converges once it is back', async () => {
    const p = platform();
    await p.runningTurn();
    p.sandboxManager.facts = { sandbox: 'missing', harness: { alive: false, attached: false }, input_delivered: true, output: null };
    p.journal.outage = true;

    await p.sweepAfter(6_000);
    await p.sweepAfter(6_000);
    expect(p.sandboxManager.queries()).toEqual([]);
    expect(p.logs.some((l) => l.message.includes('journal unreadable') && l.fields.session_id === 'sesn_w')).toBe(true);

    p.journal.outage = false;
    await p.sweepAfter(1_000);
    expect(p.terminalOf()).toEqual(['TurnFailed(sandbox_lost)']);
  });

  it('sandbox-manager unanswered (restarting): no attempt is burned, and the turn goes on once it answers', async () => {
    const p = platform({ maxAttempts: 2 });
    await p.runningTurn();
    p.sandboxManager.down = true;

    await p.sweepAfter(6_000);
    for (let i = 0; i < 10; i++) await p.sweepAfter(1_000);
    expect(p.terminalOf()).toEqual([]);
    expect(p.reconciler.openTurns()).toEqual([{ session_id: SESSION, turn_id: TURN, attempts: 0, waiting_for: null }]);
    expect(p.sandboxManager.queries()).toEqual([]);

    p.sandboxManager.down = false;
    await p.sweepAfter(1_000);
    expect(p.sandboxManager.queries()).toEqual(['probe']);
    await p.send('CompleteTurn', { turn_id: TURN, generation: 1, interrupted: false, harness_session_id: null });
    await p.quiet();
    expect(p.terminalOf()).toEqual(['TurnCompleted']);
  });

  it('sandbox-manager gone for good: the turn fails no_progress once none has answered for unansweredMs', async () => {
    const p = platform({ unansweredMs: 30_000 });
    await p.runningTurn();
    p.sandboxManager.down = true;

    await p.sweepAfter(6_000);
    for (let i = 0; i < 29; i++) await p.sweepAfter(1_000);
    expect(p.terminalOf()).toEqual([]);
    await p.sweepAfter(1_000);

    expect(p.terminalOf()).toEqual(['TurnFailed(no_progress)']);
    const failed = p.journal.all(SESSION).find((e) => e.type === 'TurnFailed');
    expect(failed?.type === 'TurnFailed' && failed.data.message).toMatch(/^No sandbox-manager answered for 30 s \(last: probe unanswered: no sandbox-manager answered probe: timeout\)\.$/);
  });

  it('a turn started after a settled one is tracked again from its first event', async () => {
    const p = platform();
    await p.runningTurn();
    await p.send('CompleteTurn', { turn_id: TURN, generation: 1, interrupted: false, harness_session_id: null });
    await p.quiet();
    expect(p.reconciler.openTurns()).toEqual([]);

    await p.send('SubmitUserMessage', { turn_id: 'turn_2', content: [{ type: 'text', text: 'next' }] });
    await p.quiet();
    expect(p.reconciler.openTurns()).toEqual([{ session_id: SESSION, turn_id: 'turn_2', attempts: 0, waiting_for: null }]);
  });
});
