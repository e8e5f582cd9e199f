import type { SandboxProbe, SessionCommand } from '@berth/contracts';
import { FixedClock, SequentialIds } from '@berth/core/testing';
import type { SandboxBinding, SessionState } from '@berth/session-domain';
import { createSessionLifecycle } from '../flows/session-lifecycle';
import type { BackgroundTasks, SandboxProber, SandboxStartup, TurnReconcilePass } from '../flows/ports';
import { createSessionKernel, type SessionKernel } from '../kernel';
import { commandsFor } from './commands';
import { InMemoryJournal } from './in-memory-journal';

/** A clock that answers a scripted sequence of instants first (to step time past a deadline), then stands still. */
export class ScriptedClock extends FixedClock {
  readonly script: Date[] = [];
  override now(): Date {
    return this.script.shift() ?? super.now();
  }
}

/** Probe answers a test can set. */
export const Probes = {
  running: { exists: true, running: true, expiry_known: true, expired: false },
  gone: { exists: false, running: false, expiry_known: true, expired: false },
  expired: { exists: true, running: true, expiry_known: true, expired: true },
  expiryUnavailable: { exists: true, running: true, expiry_known: false, expired: false },
} satisfies Record<string, SandboxProbe>;

class ProberFake implements SandboxProber {
  answer: SandboxProbe = Probes.running;
  readonly calls: { session_id: string; sandbox: SandboxBinding }[] = [];
  async probe(request: { session_id: string; sandbox: SandboxBinding }): Promise<SandboxProbe> {
    this.calls.push(request);
    return this.answer;
  }
}

class ReconcilerFake implements TurnReconcilePass {
  readonly calls: { session_id: string; state: SessionState }[] = [];
  async reconcile(request: { session_id: string; state: SessionState }): Promise<void> {
    this.calls.push(request);
  }
}

class StartupFake implements SandboxStartup {
  readonly starts: { session_id: string; generation: number; reason: string; command_id: string }[] = [];
  async start(request: { session_id: string; generation: number; reason: 'startup' | 'rebuild' | 'recover'; command_id: string }): Promise<void> {
    this.starts.push(request);
  }
}

/** Records each spawned task's name and runs it, so a test can await what it started. */
class BackgroundFake implements BackgroundTasks {
  readonly names: string[] = [];
  private readonly running: Promise<void>[] = [];
  spawn(name: string, task: () => Promise<void>): void {
    this.names.push(name);
    this.running.push(task());
  }
  settled(): Promise<unknown> {
    return Promise.all(this.running);
  }
}

/** Counts what reaches the kernel: the seed's "appended command" and "worker wakeup" in one. */
class RecordingKernel implements SessionKernel {
  readonly sent: SessionCommand[] = [];
  loads = 0;
  constructor(private readonly inner: SessionKernel) {}
  execute(command: SessionCommand) {
    this.sent.push(command);
    return this.inner.execute(command);
  }
  load(sessionId: string) {
    this.loads++;
    return this.inner.load(sessionId);
  }
}

/** A kernel over in-memory ports, the lifecycle flows over it, and fakes for every other port. */
export function seedHarness(options: { clock?: FixedClock; sleep?: (ms: number) => Promise<void> } = {}) {
  const journal = new InMemoryJournal();
  const { snapshots, sessions } = journal;
  const clock = options.clock ?? new FixedClock(new Date('2026-01-01T00:00:00.000Z'));
  const kernel = new RecordingKernel(createSessionKernel({ journal, snapshots, clock }));
  const prober = new ProberFake();
  const reconciler = new ReconcilerFake();
  const startup = new StartupFake();
  const background = new BackgroundFake();
  const flows = createSessionLifecycle({ kernel, clock, ids: new SequentialIds(), prober, reconciler, startup, background, sleep: options.sleep });
  /** Brings a session into a state by sending commands straight to the kernel (not counted as sent by a flow). */
  const given = async (sessionId: string, build: (c: ReturnType<typeof commandsFor>) => SessionCommand[]) => {
    for (const command of build(commandsFor(sessionId))) {
      const outcome = await kernel.execute(command);
      if (!outcome.ok) throw new Error(`given: ${command.type} refused: ${outcome.error.message}`);
    }
    kernel.sent.length = 0;
    kernel.loads = 0;
    return journal.all(sessionId).length;
  };
  return { journal, snapshots, sessions, clock, kernel, prober, reconciler, startup, background, flows, given };
}
