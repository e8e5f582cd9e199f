import type { Readable } from 'node:stream';
import { AsyncQueue } from '@berth/core';
import type { ExecHandle, ExecSpec, SandboxInfo, SandboxPathStat, SandboxRuntime, SandboxRuntimeEvent, SandboxSpec } from '@berth/ports';
import { holdsPlace, placeSandboxes } from '@berth/sandbox-domain';
import type { LeaseLock } from './lease-lock';

/** One engine sandboxes may run on. */
export type SandboxHost = Readonly<{
  /** Stable name (lowercase letters, digits, `-`): recorded with every sandbox placed on it. */
  name: string;
  /** Creating apart from starting: a placement counts the container from its creation on. */
  runtime: SandboxRuntime & Required<Pick<SandboxRuntime, 'create' | 'start'>>;
  /** The most sandboxes (session and warm-pool containers, created or running) it may hold. */
  maxSandboxes: number;
  /** Resolves when the engine answers (the `_ping` of Docker); a rejection or no answer within the timeout is a miss. */
  ping(): Promise<unknown>;
}>;

export type MultiHostOptions = Readonly<{
  hosts: readonly SandboxHost[];
  /** The labels of this installation's containers: what counts against a host's limit. */
  countedLabels: Readonly<Record<string, string>>;
  /**
   * The store's lease that makes each placement (the hosts counted, the container created on the
   * chosen one) the only one at a time across every manager placing on these hosts; without it,
   * placements are serialised in this process only.
   */
  placementLock?: LeaseLock;
  /** How often every host is pinged. */
  probeMs?: number;
  pingTimeoutMs?: number;
  /** Consecutive missed pings after which a host is lost. */
  missesBeforeLost?: number;
  now?: () => Date;
  /** A host was lost (with how many sandboxes) or answers again. */
  onHostChange?: (change: Readonly<{ host: string; reachable: boolean; sandboxes: number }>) => void;
  onError?: (error: unknown, context: string) => void;
}>;

/** An operation on a host that is lost (or is lost while the operation waits). */
export class HostLostError extends Error {
  constructor(readonly host: string) {
    super(`sandbox host ${host} does not answer`);
    this.name = 'HostLostError';
  }
}

type Known = Readonly<{ id: string; name: string; labels: Readonly<Record<string, string>> }>;
type Waiting = Readonly<{ spec: SandboxSpec; placed: (host: HostState) => void; failed: (error: unknown) => void }>;

class HostState {
  reachable = true;
  misses = 0;
  /** Every container of ours seen here, by id: what is reported lost with the host. */
  readonly known = new Map<string, Known>();
  /** Containers reported lost with the host: removed when it answers again (their sessions moved on). */
  lostContainers: Known[] = [];
  private lost = deferredLoss();

  constructor(readonly def: SandboxHost) {}

  get name(): string {
    return this.def.name;
  }

  /** `operation` on this host, failing with HostLostError as soon as the host is lost (a frozen engine never answers). */
  guard<T>(operation: () => Promise<T>): Promise<T> {
    if (!this.reachable) return Promise.reject(new HostLostError(this.name));
    return Promise.race([operation(), this.lost.promise]);
  }

  markLost(): void {
    this.reachable = false;
    this.lost.reject(new HostLostError(this.name));
    this.lost = deferredLoss();
  }

  remember(info: SandboxInfo | Known): void {
    this.known.set(info.id, { id: info.id, name: info.name, labels: info.labels });
  }
}

function deferredLoss(): { promise: Promise<never>; reject: (error: Error) => void } {
  let reject: (error: Error) => void = () => undefined;
  const promise = new Promise<never>((_, r) => (reject = r));
  promise.catch(() => undefined);
  return { promise, reject };
}

const SANDBOX_HOST_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/;

/**
 * One `SandboxRuntime` over several hosts (Docker engines): a new sandbox goes to the host with
 * the most free places (`placeSandbox`), a sandbox stays on the host it was created on (every
 * operation finds it there by name), and a host that stops answering is *lost*: its sandboxes are
 * reported `lost` on the event stream (the manager reports them dead; the next turn of each session
 * starts on another host), it gets no new sandbox, and calls waiting on it fail at once. When it
 * answers again it takes sandboxes again, and the containers reported lost on it are removed.
 *
 * The limit holds across managers: placing counts every created or running container of the
 * installation on each host and creates the new containers before the next placing counts, under
 * the store's placement lease (`placementLock`). New sandboxes that wait meanwhile are placed
 * together in the next round (one count, their creates at once); their starts, the slow part, run
 * outside the lease.
 */
export class MultiHostRuntime implements SandboxRuntime {
  private readonly hosts: readonly HostState[];
  /** Container name or id → the host it was last seen on. */
  private readonly where = new Map<string, HostState>();
  private readonly subscribers = new Set<AsyncQueue<SandboxRuntimeEvent>>();
  /** New sandboxes waiting for a placement: each round places all that wait, under one hold of the placement lock. */
  private readonly waiting: Waiting[] = [];
  private placing = false;
  private readonly probe: NodeJS.Timeout;
  private probing = false;
  private readonly pingTimeoutMs: number;
  private readonly missesBeforeLost: number;
  private readonly now: () => Date;
  /** One lease per set of hosts: managers listing the same hosts (by name) place one at a time. */
  private readonly placementLease: string;

  constructor(private readonly options: MultiHostOptions) {
    if (options.hosts.length === 0) throw new Error('a multi-host runtime needs at least one host');
    const names = new Set<string>();
    for (const host of options.hosts) {
      if (!SANDBOX_HOST_NAME.test(host.name)) throw new Error(`sandbox host name ${JSON.stringify(host.name)}: lowercase letters, digits and '-', at most 63`);
      if (names.has(host.name)) throw new Error(`sandbox host ${host.name} is listed twice`);
      if (!Number.isInteger(host.maxSandboxes) || host.maxSandboxes < 1) throw new Error(`sandbox host ${host.name}: max sandboxes must be a positive integer`);
      names.add(host.name);
    }
    this.hosts = options.hosts.map((h) => new HostState(h));
    this.placementLease = `sandbox-placement:${[...names].sort().join(',')}`;
    this.pingTimeoutMs = options.pingTimeoutMs ?? 2000;
    this.missesBeforeLost = options.missesBeforeLost ?? 3;
    this.now = options.now ?? (() => new Date());
    this.probe = setInterval(() => void this.probeHosts(), options.probeMs ?? 1000);
    this.probe.unref();
  }

  /** Each host's name, whether it answers and the sandboxes it holds (for logs, metrics and the benchmark). */
  async loads(): Promise<readonly Readonly<{ host: string; reachable: boolean; sandboxes: number; maxSandboxes: number }>[]> {
    return Promise.all(
      this.hosts.map(async (h) => ({ host: h.name, reachable: h.reachable, sandboxes: h.reachable ? await this.count(h).catch(() => 0) : 0, maxSandboxes: h.def.maxSandboxes })),
    );
  }

  close(): void {
    clearInterval(this.probe);
  }

  async ensureRunning(spec: SandboxSpec): Promise<SandboxInfo> {
    const existing = await this.locate(spec.name);
    if (existing !== null) return this.tag(existing, await existing.guard(() => existing.def.runtime.ensureRunning(spec)));
    const host = await this.placeAndCreate(spec);
    try {
      return this.tag(host, await host.guard(() => host.def.runtime.start(spec.name)));
    } catch (error) {
      // Created and never started, it would hold a place on the host until a start-up reconcile removed it.
      await host.guard(() => host.def.runtime.remove(spec.name)).catch(() => undefined);
      throw error;
    }
  }

  async inspect(nameOrId: string): Promise<SandboxInfo | null> {
    const host = await this.locate(nameOrId);
    if (host === null) return null;
    const info = await host.guard(() => host.def.runtime.inspect(nameOrId)).catch(lostAsNull);
    return info === null ? null : this.tag(host, info);
  }

  async stop(nameOrId: string, timeoutSeconds?: number): Promise<void> {
    const host = await this.locate(nameOrId);
    if (host !== null) await host.guard(() => host.def.runtime.stop(nameOrId, timeoutSeconds)).catch(lostAsNull);
  }

  async remove(nameOrId: string): Promise<void> {
    const host = await this.locate(nameOrId);
    if (host === null) return;
    await host.guard(() => host.def.runtime.remove(nameOrId)).catch(lostAsNull);
    this.forget(host, nameOrId);
  }

  async list(labels: Readonly<Record<string, string>>): Promise<readonly SandboxInfo[]> {
    const perHost = await Promise.all(
      this.hosts.map(async (h) => {
        try {
          return (await h.guard(() => h.def.runtime.list(labels))).map((info) => this.tag(h, info));
        } catch (error) {
          // A host that does not answer holds nothing Berth can use; the others are still listed.
          if (!(error instanceof HostLostError)) this.options.onError?.(error, `list on sandbox host ${h.name}`);
          return [];
        }
      }),
    );
    return perHost.flat();
  }

  async exec(nameOrId: string, spec: ExecSpec): Promise<ExecHandle> {
    const host = await this.require(nameOrId);
    const handle = await host.guard(() => host.def.runtime.exec(nameOrId, spec));
    // A harness on a host that is lost mid-turn ends with the host, not never.
    const exit = host.guard(() => handle.exit);
    // As the engine's own exec: a caller may never await `exit` (it stopped at the lines, which
    // fail with the host too); the loss must not become an unhandled rejection that ends the process.
    exit.catch(() => undefined);
    return { ...handle, lines: guardedLines(host, handle.lines), exit };
  }

  async relabel(nameOrId: string, newName: string): Promise<void> {
    const host = await this.require(nameOrId);
    const relabel = host.def.runtime.relabel;
    if (!relabel) throw new Error(`sandbox host ${host.name} cannot rename containers`);
    await host.guard(() => relabel.call(host.def.runtime, nameOrId, newName));
    this.where.delete(nameOrId);
    this.where.set(newName, host);
  }

  async readFile(nameOrId: string, path: string): Promise<Buffer | null> {
    const host = await this.locate(nameOrId);
    return host === null ? null : host.guard(() => host.def.runtime.readFile(nameOrId, path));
  }

  async writeFile(nameOrId: string, path: string, data: Buffer | string, mode?: number): Promise<void> {
    const host = await this.require(nameOrId);
    await host.guard(() => host.def.runtime.writeFile(nameOrId, path, data, mode));
  }

  async putArchive(nameOrId: string, dir: string, archive: Readable): Promise<void> {
    const host = await this.require(nameOrId);
    await host.guard(() => host.def.runtime.putArchive(nameOrId, dir, archive));
  }

  async getArchive(nameOrId: string, path: string): Promise<Readable | null> {
    const host = await this.locate(nameOrId);
    return host === null ? null : host.guard(() => host.def.runtime.getArchive(nameOrId, path));
  }

  async stat(nameOrId: string, path: string): Promise<SandboxPathStat | null> {
    const host = await this.locate(nameOrId);
    return host === null ? null : host.guard(() => host.def.runtime.stat(nameOrId, path));
  }

  async appendFile(nameOrId: string, path: string, data: string): Promise<void> {
    const host = await this.require(nameOrId);
    await host.guard(() => host.def.runtime.appendFile(nameOrId, path, data));
  }

  /** Every host's events, merged, and a `lost` event for each sandbox of a host when it is lost. */
  events(signal: AbortSignal): AsyncIterable<SandboxRuntimeEvent> {
    const queue = new AsyncQueue<SandboxRuntimeEvent>();
    this.subscribers.add(queue);
    const follow = async (host: HostState) => {
      try {
        for await (const event of host.def.runtime.events(signal)) {
          if (event.kind === 'destroy') this.forget(host, event.containerId);
          else host.remember({ id: event.containerId, name: event.name, labels: event.labels });
          queue.push(event);
        }
      } catch (error) {
        if (!signal.aborted) this.options.onError?.(error, `events of sandbox host ${host.name}`);
      }
    };
    const ended = () => {
      this.subscribers.delete(queue);
      queue.end();
    };
    if (signal.aborted) ended();
    else signal.addEventListener('abort', ended, { once: true });
    for (const host of this.hosts) void follow(host);
    return queue;
  }

  /** Chooses the host and creates the container there (see the class's comment). */
  private placeAndCreate(spec: SandboxSpec): Promise<HostState> {
    const placed = new Promise<HostState>((resolve, reject) => this.waiting.push({ spec, placed: resolve, failed: reject }));
    void this.placeWaiting();
    return placed;
  }

  /** Rounds of placement until nothing waits; one round at a time in this process. */
  private async placeWaiting(): Promise<void> {
    if (this.placing) return;
    this.placing = true;
    try {
      while (this.waiting.length > 0) {
        const round = this.waiting.splice(0);
        const lock = this.options.placementLock;
        await (lock === undefined ? this.placeRound(round) : lock.run(this.placementLease, () => this.placeRound(round))).catch((error: unknown) => {
          for (const w of round) w.failed(error);
        });
      }
    } finally {
      this.placing = false;
    }
  }

  private async placeRound(round: readonly Waiting[]): Promise<void> {
    const loads = await Promise.all(
      this.hosts.map(async (h) => {
        const sandboxes = h.reachable ? await this.count(h).catch(() => null) : null;
        return { name: h.name, maxSandboxes: h.def.maxSandboxes, sandboxes: sandboxes ?? 0, reachable: sandboxes !== null };
      }),
    );
    const placements = placeSandboxes(loads, round.length);
    await Promise.all(
      round.map(async (w, i) => {
        const placement = placements[i];
        if (placement?.kind !== 'placed') return w.failed(new Error(placement?.message));
        const host = this.hosts.find((h) => h.name === placement.host) as HostState;
        await host.guard(() => host.def.runtime.create(w.spec)).then(() => w.placed(host), w.failed);
      }),
    );
  }

  private async count(host: HostState): Promise<number> {
    const sandboxes = await host.guard(() => host.def.runtime.list(this.options.countedLabels));
    return sandboxes.filter(holdsPlace).length;
  }

  /** The host holding `nameOrId`: where it was last seen, else the first reachable host that has it. */
  private async locate(nameOrId: string): Promise<HostState | null> {
    const cached = this.where.get(nameOrId);
    if (cached !== undefined && cached.reachable) return cached;
    const found = await Promise.all(
      this.hosts.filter((h) => h.reachable).map(async (h) => ((await h.guard(() => h.def.runtime.inspect(nameOrId)).catch(lostAsNull)) === null ? null : h)),
    );
    const host = found.find((h): h is HostState => h !== null) ?? null;
    if (host !== null) this.where.set(nameOrId, host);
    return host;
  }

  private async require(nameOrId: string): Promise<HostState> {
    const host = await this.locate(nameOrId);
    if (host === null) throw new Error(`no sandbox ${nameOrId} on any sandbox host that answers`);
    return host;
  }

  private tag(host: HostState, info: SandboxInfo): SandboxInfo {
    this.where.set(info.name, host);
    this.where.set(info.id, host);
    host.remember(info);
    return { ...info, host: host.name };
  }

  private forget(host: HostState, nameOrId: string): void {
    const known = host.known.get(nameOrId) ?? [...host.known.values()].find((k) => k.name === nameOrId);
    if (known !== undefined) {
      host.known.delete(known.id);
      this.where.delete(known.id);
      this.where.delete(known.name);
    }
    this.where.delete(nameOrId);
  }

  private async probeHosts(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      await Promise.all(this.hosts.map((h) => this.probeHost(h)));
    } finally {
      this.probing = false;
    }
  }

  private async probeHost(host: HostState): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const answered = await Promise.race([
      host.def.ping().then(() => true, () => false),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.pingTimeoutMs))),
    ]);
    clearTimeout(timer);
    if (answered) {
      host.misses = 0;
      if (!host.reachable) this.hostAnswers(host);
      return;
    }
    host.misses += 1;
    if (host.reachable && host.misses >= this.missesBeforeLost) this.hostLost(host);
  }

  private hostLost(host: HostState): void {
    host.markLost();
    const lost = [...host.known.values()];
    host.lostContainers.push(...lost);
    host.known.clear();
    for (const [key, h] of this.where) if (h === host) this.where.delete(key);
    const at = this.now().toISOString();
    for (const sandbox of lost) {
      const event: SandboxRuntimeEvent = { kind: 'lost', containerId: sandbox.id, name: sandbox.name, labels: sandbox.labels, exitCode: null, at };
      for (const queue of this.subscribers) queue.push(event);
    }
    this.options.onHostChange?.({ host: host.name, reachable: false, sandboxes: lost.length });
  }

  private hostAnswers(host: HostState): void {
    host.reachable = true;
    const stale = host.lostContainers;
    host.lostContainers = [];
    this.options.onHostChange?.({ host: host.name, reachable: true, sandboxes: stale.length });
    // Their sessions were told they are gone and moved on: what still runs there is nobody's.
    for (const sandbox of stale) {
      void host.guard(() => host.def.runtime.remove(sandbox.id)).catch((error: unknown) => this.options.onError?.(error, `removing lost sandbox ${sandbox.name} from ${host.name}`));
    }
  }
}

function lostAsNull(error: unknown): null {
  if (error instanceof HostLostError) return null;
  throw error;
}

async function* guardedLines(host: HostState, lines: AsyncIterable<string>): AsyncIterable<string> {
  const iterator = lines[Symbol.asyncIterator]();
  for (;;) {
    const next = await host.guard(() => iterator.next());
    if (next.done) return;
    yield next.value;
  }
}
