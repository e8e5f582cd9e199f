import type { CommandOutcome, RecordedEvent, SandboxProbe as ProbeFacts, SessionCommand } from '@berth/contracts';
import { FixedClock, SequentialIds } from '@berth/core/testing';
import type { CommandBus } from '@berth/ports';
import { createSessionKernel } from '@berth/session-kernel';
import { UnconfiguredSecretBox } from '@berth/secrets';
import { commandsFor, InMemoryJournal } from '@berth/session-kernel/testing';
import { SessionCommands, SessionUseCases, type ProbeTarget, type SandboxProbe } from '@berth/session-use-cases';
import { MemoryStore } from '@berth/testing';
import { defaultReconcilePolicy, turnReconciler, type TurnReconcileOutput } from '@berth/turns-domain';

export const OWNER = 'owner_1';

/** A clock that answers a scripted sequence of instants first (to step time past a deadline), then stands still. */
export class ScriptedClock extends FixedClock {
  readonly script: Date[] = [];
  override now(): Date {
    return this.script.shift() ?? super.now();
  }
}

/** Probe answers a test can set (what the sandbox-manager would report). */
export const Probes = {
  running: { exists: true, running: true, expiry_known: true, expired: false },
  gone: { exists: false, running: false, expiry_known: true, expired: false },
  expired: { exists: true, running: true, expiry_known: true, expired: true },
} satisfies Record<string, ProbeFacts>;

class ScriptedProbe implements SandboxProbe {
  answer: ProbeFacts = Probes.running;
  readonly calls: ProbeTarget[] = [];
  async probe(target: ProbeTarget): Promise<ProbeFacts> {
    this.calls.push(target);
    return this.answer;
  }
}

/** The NATS command bus's job in one process: every command straight to the kernel. Records what reached it. */
class KernelBus implements CommandBus {
  readonly sent: SessionCommand[] = [];
  constructor(private readonly kernel: { execute(command: SessionCommand): Promise<CommandOutcome> }) {}
  send(command: SessionCommand): Promise<CommandOutcome> {
    this.sent.push(command);
    return this.kernel.execute(command);
  }
  async dispatch(command: SessionCommand): Promise<void> {
    await this.send(command);
  }
}

/**
 * The code that runs behind the gateway, in one process: the session use cases (what every
 * session route calls) sending through the real `SessionCommands` to the real session kernel over
 * in-memory ports (journal, snapshots, read model, idempotency keys), with the sandbox probe
 * scripted and time injected. `reconcilerAfter` runs the turn-reconciler's real workflow over the
 * journal, to see what it does next.
 */
export function seedPlatform(options: { clock?: FixedClock } = {}) {
  // The journal's commit writes the snapshot and the read-model row, as every store does.
  const journal = new InMemoryJournal();
  const { snapshots, sessions } = journal;
  const { idempotency, secrets, transcripts } = new MemoryStore();
  const clock = options.clock ?? new FixedClock(new Date('2026-01-01T00:00:00.000Z'));
  const ids = new SequentialIds();
  const kernel = createSessionKernel({ journal, snapshots, clock });
  const bus = new KernelBus(kernel);
  const probe = new ScriptedProbe();
  const sleeps: number[] = [];
  /** Runs at each sleep of a use case (what the rest of the platform does meanwhile). */
  const meanwhile: { run: () => Promise<void> } = { run: async () => undefined };
  const useCases = new SessionUseCases({
    sessions,
    idempotency,
    journal,
    commands: new SessionCommands(bus, clock, ids, 5_000),
    probe,
    secrets,
    transcripts,
    // The seed's sessions carry no repository tokens: nothing is ever sealed.
    box: new UnconfiguredSecretBox(),
    clock,
    ids,
    sleep: async (ms) => {
      sleeps.push(ms);
      await meanwhile.run();
    },
  });

  /** Brings a session into a state by sending commands straight to the kernel (not counted as sent). */
  const given = async (sessionId: string, build: (c: ReturnType<typeof commandsFor>) => SessionCommand[]) => {
    for (const command of build(commandsFor(sessionId, OWNER))) {
      const outcome = await kernel.execute(command);
      if (!outcome.ok) throw new Error(`given: ${command.type} refused: ${outcome.error.message}`);
    }
    return journal.all(sessionId).length;
  };

  /** Resets what counts as "sent by the use case" (after a scene set up with use cases). */
  const forget = () => {
    bus.sent.length = 0;
  };

  /** What the turn-reconciler does for this session at its first sweep after `afterMs` (it folds the whole journal first). */
  const reconcilerAfter = (sessionId: string, afterMs = defaultReconcilePolicy.probeAfterMs): readonly TurnReconcileOutput[] => {
    const workflow = turnReconciler();
    const now = clock.now().toISOString();
    let state = workflow.initialState();
    for (const event of journal.all(sessionId) as RecordedEvent[]) state = workflow.evolve(state, { kind: 'event', event, now });
    return workflow.decide({ kind: 'tick', now: new Date(clock.now().getTime() + afterMs).toISOString() }, state);
  };

  return { journal, snapshots, sessions, idempotency, clock, kernel, sent: bus.sent, probe, sleeps, meanwhile, useCases, given, forget, reconcilerAfter };
}
