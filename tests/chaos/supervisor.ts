import Database from 'better-sqlite3';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { appendFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerSandboxRuntime } from '@berth/docker';
import { ensureDockerTestEngine, freePort, releaseWorkspaceMounts, startNatsServer, type NatsServerHandle } from '@berth/testing';
import { GatewayBalancer } from './gateway-balancer';
import { PrivateEngine, type EngineName } from './private-engine';
import { REPO_ROOT, startService, type ServiceProcess } from './service-process';

/** The store's filesystem: a tmpfs this small, so a scenario can fill it. */
const STORE_FS_MB = 256;

export const SERVICES = ['session-kernel', 'egress', 'sandbox-manager', 'turn-reconciler', 'gateway'] as const;
export type ServiceName = (typeof SERVICES)[number];

/** Every crash point each service offers (read from its config; `BERTH_CRASH_POINT` arms one). */
export const CRASH_POINTS: Readonly<Record<ServiceName, readonly string[]>> = {
  'session-kernel': ['after-commit-before-publish', 'after-publish-before-mark', 'after-publish-before-ack'],
  egress: [],
  'sandbox-manager': ['mid-turn', 'after-sandbox-start-before-bind', 'after-turn-end-before-complete'],
  'turn-reconciler': ['before-command', 'after-command'],
  gateway: [],
};

/** The services a scenario can run a second replica of (the egress serves its host's sandbox sockets: one per host). */
export const REPLICATED = ['session-kernel', 'sandbox-manager', 'turn-reconciler', 'gateway'] as const;
export type ReplicatedService = (typeof REPLICATED)[number];

export type SupervisorOptions = Readonly<{
  /** The server-wide default model endpoint (each scenario's environment points at its own). */
  modelBaseUrl: string;
  /**
   * Docker engines of the suite's own (default 1). With 2 the sandbox-managers place sandboxes on
   * both (`BERTH_SANDBOX_HOSTS`), and each engine has its own egress process and egress directory.
   */
  engines?: 1 | 2;
}>;

/** One Docker engine the sandbox-managers place sandboxes on, as the suite reads it directly. */
export type SandboxHost = Readonly<{ name: EngineName; runtime: DockerSandboxRuntime; egressDir: string }>;

/** How many sandboxes each engine may hold with two (far more than a run makes: placement goes by free places, so they alternate). */
const MAX_SANDBOXES_PER_HOST = 50;
/** The managers ping each engine this often with two; three misses in a row (each ping given 2 s) and it is lost: ~6 s after a freeze. */
const HOST_PROBE_MS = 300;

/**
 * The chaos suite's platform: one nats-server (own store dir), one or two Docker engines of its
 * own (see PrivateEngine), and the services as child processes on loopback over one fresh SQLite file
 * on a small tmpfs; clients reach the gateway through a balancer, as in a deployment, so a second
 * gateway replica (`startReplica`) takes the connections of one that died. It can SIGKILL and restart any service (optionally with a crash point armed),
 * restart or SIGKILL the broker, restart the engine (freeze one of two), hold the store's write lock or fill its disk
 * for a while, and skew one service's wall clock.
 */
export class Supervisor {
  readonly scope: string;
  readonly storeUrl: string;
  readonly egressDir: string;
  readonly gatewayUrl: string;
  /** The first engine's sandboxes (the only engine unless the platform has two). */
  readonly runtime: DockerSandboxRuntime;
  /** Every engine sandboxes are placed on, each read directly (its own runtime), in BERTH_SANDBOX_HOSTS order. */
  readonly hosts: readonly SandboxHost[];
  apiKey = '';

  private readonly procs = new Map<ServiceName, ServiceProcess>();
  /** Second replicas a scenario started (`startReplica`); `settle()` stops them. */
  private readonly replicas = new Map<ReplicatedService, ServiceProcess>();
  /** Services running with extra environment (an armed crash point): `settle()` restarts them plain. */
  private readonly special = new Set<ServiceName>();
  /** Every process started, in order, for the logs. */
  private readonly started: ServiceProcess[] = [];
  private readonly clockFiles = new Map<ServiceName, string>();
  /** The egress processes of the engines after the first (the first one's is the `egress` service). */
  private readonly hostEgress = new Map<EngineName, ServiceProcess>();
  /** Engines a scenario froze (`freezeEngine`): `settle()` and `stop()` thaw them. */
  private readonly frozen = new Set<PrivateEngine>();

  private constructor(
    private readonly dir: string,
    readonly nats: NatsServerHandle,
    private readonly engines: readonly PrivateEngine[],
    private readonly storeDir: string,
    private readonly harnessImage: string,
    private readonly gatewayPort: number,
    private readonly replicaGatewayPort: number,
    private readonly balancer: GatewayBalancer,
    private readonly options: SupervisorOptions,
  ) {
    this.scope = `chaos${process.pid}${Date.now().toString(36)}`;
    this.storeUrl = `sqlite:${join(storeDir, 'berth.db')}`;
    this.egressDir = join(dir, 'egress');
    this.gatewayUrl = `http://127.0.0.1:${balancer.port}`;
    balancer.add(gatewayPort);
    this.hosts = engines.map((engine, i) => {
      const egressDir = i === 0 ? this.egressDir : `${this.egressDir}-${engine.name}`;
      return { name: engine.name, egressDir, runtime: new DockerSandboxRuntime({ dockerHost: engine.dockerHost, managedLabels: { 'berth.scope': this.scope }, egressRoot: egressDir }) };
    });
    this.runtime = (this.hosts[0] as SandboxHost).runtime;
    for (const name of SERVICES) {
      const file = join(dir, `${name}.clock`);
      writeFileSync(file, '0');
      this.clockFiles.set(name, file);
    }
  }

  static async start(options: SupervisorOptions): Promise<Supervisor> {
    // BERTH_CHAOS_HARNESS_IMAGE: an image the suite's engine already holds, used as it is (no build
    // step: for a rerun while another build holds build-images.sh's lock).
    const preset = process.env.BERTH_CHAOS_HARNESS_IMAGE;
    const built = preset ? null : ensureDockerTestEngine({ harness: true });
    if (built?.harnessImage === null) throw new Error('the harness image could not be built');
    const harnessImage = preset ?? (built?.harnessImage as string);
    const names: EngineName[] = options.engines === 2 ? ['a', 'b'] : ['a'];
    const engines = await Promise.all(names.map((name) => PrivateEngine.start(name, built ? [built.baseImage, harnessImage] : [], built?.dockerHost ?? '')));
    const dir = mkdtempSync(join(tmpdir(), 'berth-chaos-'));
    const storeDir = join(dir, 'store');
    mkdirSync(storeDir);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${STORE_FS_MB}m`, 'berth-chaos-store', storeDir]);
    const nats = await startNatsServer();
    const balancer = await new GatewayBalancer(await freePort()).start();
    const supervisor = new Supervisor(dir, nats, engines, storeDir, harnessImage, await freePort(), await freePort(), balancer, options);
    try {
      // The kernel declares the streams; the others only attach to them.
      await supervisor.startService('session-kernel');
      await Promise.all((['egress', 'sandbox-manager', 'turn-reconciler', 'gateway'] as const).map((name) => supervisor.startService(name)));
      for (const host of supervisor.hosts.slice(1)) await supervisor.startHostEgress(host);
      supervisor.apiKey = execFileSync(
        process.execPath,
        ['-r', '@swc-node/register', 'apps/gateway/src/cli/create-api-key.ts', '--owner', 'chaos', '--store', supervisor.storeUrl],
        { cwd: REPO_ROOT, encoding: 'utf8' },
      ).trim();
      return supervisor;
    } catch (error) {
      await supervisor.stop();
      throw error;
    }
  }

  get dbPath(): string {
    return this.storeUrl.slice('sqlite:'.length);
  }

  /** The environment a service runs with: the chaos defaults, then `extra`. */
  envFor(name: ServiceName, extra: Record<string, string> = {}): Record<string, string> {
    const common = { ...this.nats.env(name), BERTH_STORE_URL: this.storeUrl, BERTH_CHAOS_CLOCK_FILE: this.clockFiles.get(name) as string };
    // A short ack_wait so a delivery lost with a killed consumer comes back within the bound
    // (docs/recovery.md: "the chaos suite runs with a short one").
    const delivery = { BERTH_NATS_ACK_WAIT_MS: '3000' };
    const defaults: Record<ServiceName, Record<string, string>> = {
      'session-kernel': { ...common, ...delivery, BERTH_OUTBOX_RELAY_MS: '200' },
      // Each scenario's environment names its own scripted model on 127.0.0.1: the operator trusts that host.
      // Nothing else is reachable: every other destination goes to an upstream proxy that is not there.
      egress: {
        ...common,
        BERTH_EGRESS_DIR: this.egressDir,
        BERTH_EGRESS_CA_DIR: `${this.egressDir}-ca`,
        BERTH_MODEL_BASE_URL: this.options.modelBaseUrl,
        BERTH_MODEL_API_KEY: 'sk-scripted-not-a-real-key',
        BERTH_MODEL_TRUSTED_HOSTS: '127.0.0.1',
        BERTH_EGRESS_UPSTREAM_PROXY: 'http://127.0.0.1:9',
      },
      'sandbox-manager': {
        ...common,
        ...delivery,
        DOCKER_HOST: (this.engines[0] as PrivateEngine).dockerHost,
        BERTH_EGRESS_DIR: this.egressDir,
        BERTH_SANDBOX_IMAGE: this.harnessImage,
        BERTH_SANDBOX_SCOPE: this.scope,
        BERTH_LEASE_SWEEP_MS: '500',
        BERTH_WORKSPACE_DIR: join(this.dir, 'workspaces'),
        ...(this.hosts.length > 1 ? this.sandboxHostsEnv() : {}),
      },
      // A stable identity across restarts (a container keeps its name): a restart takes its lease back at once.
      'turn-reconciler': { ...common, ...delivery, BERTH_RECONCILER_LEASE_MS: '3000', BERTH_INSTANCE_ID: 'chaos-a' },
      gateway: { ...common, PORT: String(this.gatewayPort), HOST: '127.0.0.1' },
    };
    return { ...defaults[name], ...extra };
  }

  /**
   * Several engines: the managers place sandboxes on all of them, with loop workspaces (a session's
   * workspace follows it to another engine) and a short host probe.
   */
  private sandboxHostsEnv(): Record<string, string> {
    const hosts = this.hosts.map((h, i) => ({ name: h.name, docker_host: (this.engines[i] as PrivateEngine).dockerHost, egress_dir: h.egressDir, max_sandboxes: MAX_SANDBOXES_PER_HOST }));
    return { BERTH_SANDBOX_HOSTS: JSON.stringify(hosts), BERTH_WORKSPACE_STORAGE: 'loop', BERTH_SANDBOX_HOST_PROBE_MS: String(HOST_PROBE_MS) };
  }

  /** The egress of an engine after the first: the same configuration on that engine's egress directory (and its own CA). */
  private async startHostEgress(host: SandboxHost): Promise<void> {
    const proc = await startService('egress', this.envFor('egress', { BERTH_EGRESS_DIR: host.egressDir, BERTH_EGRESS_CA_DIR: `${host.egressDir}-ca` }));
    this.hostEgress.set(host.name, proc);
    this.started.push(proc);
  }

  /** Starts a service (not running) and waits for its ready line. */
  async startService(name: ServiceName, extra: Record<string, string> = {}): Promise<void> {
    const running = this.procs.get(name);
    if (running?.alive()) throw new Error(`${name} is already running`);
    const proc = await startService(name, this.envFor(name, extra));
    this.procs.set(name, proc);
    this.started.push(proc);
    if (Object.keys(extra).length > 0) this.special.add(name);
    else this.special.delete(name);
  }

  /**
   * Starts a second replica of a service beside the first (same store, broker and engine; the
   * gateway's behind the balancer, the reconciler's with its own identity, a standby until the
   * first one's lease lapses).
   */
  async startReplica(name: ReplicatedService): Promise<void> {
    if (this.replicas.get(name)?.alive()) throw new Error(`a replica of ${name} is already running`);
    const extra: Record<string, string> =
      name === 'gateway' ? { PORT: String(this.replicaGatewayPort) } : name === 'turn-reconciler' ? { BERTH_INSTANCE_ID: 'chaos-b' } : {};
    const proc = await startService(name, this.envFor(name, extra));
    this.replicas.set(name, proc);
    this.started.push(proc);
    if (name === 'gateway') this.balancer.add(this.replicaGatewayPort);
  }

  /**
   * Back to the plain platform between scenarios: no second replicas, every service running
   * without crash points, every clock true. Returns what had to be fixed.
   */
  async settle(): Promise<string[]> {
    const fixed: string[] = [];
    // A service starting while an engine is frozen would wait on it forever.
    await this.thawEngines();
    for (const name of SERVICES) {
      this.skewClock(name, 0);
      if (!this.alive(name)) {
        fixed.push(`${name} was down`);
        await this.startService(name);
      } else if (this.special.has(name)) {
        fixed.push(`${name} still had its crash point armed`);
        await this.restart(name);
      }
    }
    for (const host of this.hosts.slice(1)) {
      if (this.hostEgress.get(host.name)?.alive()) continue;
      fixed.push(`the egress of engine ${host.name} was down`);
      await this.startHostEgress(host);
    }
    // The replicas go once the first ones are back, so a client always has a gateway to reconnect to.
    for (const [name, replica] of this.replicas) {
      if (name === 'gateway') this.balancer.remove(this.replicaGatewayPort);
      await replica.stop();
    }
    this.replicas.clear();
    return fixed;
  }

  /** SIGKILL now, as a crash would. */
  async kill(name: ServiceName): Promise<void> {
    await this.procs.get(name)?.kill();
  }

  /** SIGKILL, then start again (same configuration plus `extra`, e.g. `BERTH_CRASH_POINT`). */
  async restart(name: ServiceName, extra: Record<string, string> = {}): Promise<void> {
    await this.kill(name);
    await this.startService(name, extra);
  }

  alive(name: ServiceName): boolean {
    return this.procs.get(name)?.alive() ?? false;
  }

  /** Resolves when the service dies by itself (an armed crash point); false on timeout. */
  async waitForDeath(name: ServiceName, timeoutMs: number): Promise<boolean> {
    const proc = this.procs.get(name);
    if (!proc) return false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
    const died = await Promise.race([proc.exited.then(() => true), timeout]);
    clearTimeout(timer);
    return died;
  }

  /** Stops nats-server and starts it again on the same port and store dir. */
  async restartNats(): Promise<void> {
    await this.nats.restart();
  }

  /** SIGKILLs nats-server (no clean shutdown of its JetStream store), then starts it again on the same port and store dir. */
  async crashNats(onDown: () => void): Promise<void> {
    await this.nats.crash();
    onDown();
    await this.nats.restart();
  }

  /** Freezes one engine's dockerd (SIGSTOP): it stops answering while its sandboxes run on, as a host gone from the network. */
  async freezeEngine(name: EngineName): Promise<void> {
    const engine = this.engines.find((e) => e.name === name);
    if (engine === undefined) throw new Error(`no engine ${name}`);
    this.frozen.add(engine);
    await engine.freeze();
  }

  private async thawEngines(): Promise<void> {
    for (const engine of this.frozen) await engine.thaw();
    this.frozen.clear();
  }

  /** Restarts the suite's (first) Docker engine (every sandbox on it stops), keeping it down `downForMs` first. */
  restartEngine(onDown: () => void, downForMs: number): Promise<{ downAt: number; upAt: number }> {
    return (this.engines[0] as PrivateEngine).restart(onDown, downForMs);
  }

  /**
   * Fills the store's filesystem to the last byte for `ms`, then frees it. The WAL is truncated
   * first, so every SQLite write must grow a file and fails with SQLITE_FULL (reads still work).
   * Resolves with whether a probe write really failed while the disk was full.
   */
  async diskFull(ms: number, onFull: () => void): Promise<{ writesFailed: boolean }> {
    const filler = join(this.storeDir, 'filler');
    const db = new Database(this.dbPath);
    try {
      db.pragma('busy_timeout = 5000');
      db.exec('CREATE TABLE IF NOT EXISTS chaos_disk_probe (x BLOB)');
      db.pragma('wal_checkpoint(TRUNCATE)');
      for (const chunk of [Buffer.alloc(1 << 20), Buffer.alloc(4096), Buffer.alloc(512)]) {
        try {
          for (;;) await appendFile(filler, chunk);
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        }
      }
      onFull();
      let writesFailed = false;
      try {
        db.prepare('INSERT INTO chaos_disk_probe VALUES (?)').run(Buffer.alloc(1 << 16));
      } catch (error) {
        writesFailed = (error as { code?: string }).code === 'SQLITE_FULL';
      }
      await new Promise((r) => setTimeout(r, ms));
      return { writesFailed };
    } finally {
      await rm(filler, { force: true });
      db.close();
    }
  }

  /**
   * A store outage for SQLite: another connection holds the database's write lock
   * (`BEGIN EXCLUSIVE`) for `ms`. Every service's write waits out its 5 s busy timeout and then
   * fails with SQLITE_BUSY until the lock is released; reads still work (WAL).
   */
  async storeOutage(ms: number): Promise<void> {
    const db = new Database(this.dbPath);
    try {
      db.pragma('busy_timeout = 5000');
      db.exec('BEGIN EXCLUSIVE');
      await new Promise((r) => setTimeout(r, ms));
      db.exec('COMMIT');
    } finally {
      db.close();
    }
  }

  /** Sets a service's wall-clock offset (read by the preloaded skewed clock within 100 ms). */
  skewClock(name: ServiceName, offsetMs: number): void {
    writeFileSync(this.clockFiles.get(name) as string, String(offsetMs));
  }

  /** How much each process has logged so far: pass it to `logs` to see only what came after. */
  logMark(): ReadonlyMap<number, number> {
    return new Map(this.started.map((p) => [p.pid, p.output().length]));
  }

  /** Every process's output (since `mark`), in start order. */
  logs(mark: ReadonlyMap<number, number> = new Map()): string {
    return this.started
      .map((p) => ({ p, text: p.output().slice(mark.get(p.pid) ?? 0) }))
      .filter(({ text }) => text.length > 0)
      .map(({ p, text }) => `--- ${p.name} (pid ${p.pid}${p.alive() ? '' : ', ended'})\n${text.slice(-6_000)}`)
      .join('\n');
  }

  async stop(): Promise<void> {
    await this.thawEngines();
    for (const replica of this.replicas.values()) await replica.stop();
    for (const egress of this.hostEgress.values()) await egress.stop();
    for (const name of [...SERVICES].reverse()) await this.procs.get(name)?.stop();
    await this.balancer.stop();
    try {
      for (const { runtime } of this.hosts) {
        for (const c of await runtime.list({ 'berth.scope': this.scope })) await runtime.remove(c.id);
        const { Volumes } = await runtime.docker.listVolumes({ filters: JSON.stringify({ label: [`berth.scope=${this.scope}`] }) });
        for (const volume of Volumes ?? []) await runtime.docker.getVolume(volume.Name).remove();
      }
      releaseWorkspaceMounts(join(this.dir, 'workspaces'));
    } catch (error) {
      process.stderr.write(`chaos: could not remove sandboxes or workspaces of scope ${this.scope}: ${String(error)}\n`);
    }
    await this.nats.stop();
    for (const engine of this.engines) await engine.stop();
    try {
      execFileSync('umount', [this.storeDir]);
    } catch (error) {
      process.stderr.write(`chaos: could not unmount the store's tmpfs ${this.storeDir}: ${String(error)}\n`);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}
