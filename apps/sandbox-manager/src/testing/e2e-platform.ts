import type Anthropic from '@anthropic-ai/sdk';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerSandboxRuntime } from '@berth/docker';
import { ensureDockerTestEngine, freePort, releaseWorkspaceMounts, ScriptedUpstreamProxy, startNatsServer, type NatsServerHandle, type TestHostReply } from '@berth/testing';
import { startService, type ServiceProcess } from './service-process';

/** The model key the e2e platform's egress holds: a test can look for it where it must never be (a sandbox, a log line). */
export const E2E_MODEL_KEY = 'sk-scripted-e2e-model-key-0123456789';
/** The server key that seals secrets at rest (repository tokens, vault credentials, webhook secrets), as `npm start` makes one. */
const E2E_SECRET_KEYS = `e2e:${Buffer.alloc(32, 7).toString('base64')}`;

type ServiceName = 'session-kernel' | 'egress' | 'sandbox-manager' | 'gateway';

export type E2ePlatform = Readonly<{
  gatewayUrl: string;
  apiKey: string;
  /** A key of another owner, who must see nothing of the first one's. */
  otherApiKey: string;
  runtime: DockerSandboxRuntime;
  scope: string;
  /** The egress's upstream proxy: "the internet" of the test (its test hosts), and a record of every destination asked for. */
  upstream: ScriptedUpstreamProxy;
  natsUrl: string;
  /** The SQLite file (the store unless `storeUrl` was given). */
  storePath: string;
  /** `BERTH_STORE_URL` of every service. */
  storeUrl: string;
  /** GET /metrics of each service (the gateway's on its HTTP port). */
  metricsUrls: Readonly<Record<'gateway' | 'session-kernel' | 'sandbox-manager' | 'egress', string>>;
  /** The secrets this platform was started with: none may appear in any service's log. */
  secrets: readonly string[];
  manager(): ServiceProcess;
  /** Every sandbox-manager process: the first, then the replicas (`managers` > 1). */
  managers(): readonly ServiceProcess[];
  /** GET /metrics of each sandbox-manager, in the order of `managers()`. */
  managerMetricsUrls: readonly string[];
  egress(): ServiceProcess;
  /** Kills the sandbox-manager with SIGKILL and starts a new one (same configuration). */
  restartManager(extraEnv?: Record<string, string>): Promise<void>;
  /** Kills the egress with SIGKILL and starts a new one. */
  restartEgress(): Promise<void>;
  /** Kills the sandbox-manager with SIGKILL (`startManager` brings one back). */
  killManager(): Promise<void>;
  startManager(extraEnv?: Record<string, string>): Promise<void>;
  logs(): string;
  stop(): Promise<void>;
}>;

export type E2ePlatformOptions = Readonly<{
  /** The server-wide model endpoint (the egress's `BERTH_MODEL_BASE_URL`). */
  modelBaseUrl: string;
  /**
   * Model endpoints on loopback (scripted servers) that environments name in `config.model.base_url`:
   * the platform trusts their hosts as an operator would, with `BERTH_MODEL_TRUSTED_HOSTS`.
   */
  trustedModelEndpoints?: readonly string[];
  managerEnv?: Record<string, string>;
  /** How many sandbox-manager processes share the engine, the store and the broker (default 1). */
  managers?: number;
  egressEnv?: Record<string, string>;
  /** Added to every service's environment. */
  env?: Record<string, string>;
  /** Hosts the upstream proxy serves; any other destination gets a 502 from it, never a connection. */
  upstreamHosts?: Readonly<Record<string, TestHostReply>>;
  /** A NATS the test started (e.g. a cluster) instead of the platform's own nats-server; the test stops it. */
  nats?: NatsServerHandle;
  /** Another store (`BERTH_STORE_URL`, e.g. MongoDB) instead of a fresh SQLite file. */
  storeUrl?: string;
}>;

const trustedModelHosts = (endpoints: readonly string[]): Record<string, string> =>
  endpoints.length === 0 ? {} : { BERTH_MODEL_TRUSTED_HOSTS: [...new Set(endpoints.map((url) => new URL(url).hostname))].join(',') };

/**
 * The whole platform for end-to-end tests: a nats-server, the real session-kernel, egress,
 * sandbox-manager and gateway as processes over one SQLite file, the real Docker engine with the
 * harness image. Sandboxes get the default network (the egress); the egress reaches the model on
 * loopback and everything else only through a scripted upstream proxy, so nothing leaves this
 * machine. Sandboxes carry a scope label unique to this run and are removed at the end.
 */
export async function startE2ePlatform(options: E2ePlatformOptions): Promise<E2ePlatform> {
  const engine = ensureDockerTestEngine({ harness: true });
  if (engine.harnessImage === null) throw new Error('the harness image could not be built');
  const dir = mkdtempSync(join(tmpdir(), 'berth-e2e-'));
  const scope = `e2e${process.pid}${Date.now().toString(36)}`;
  const ownNats = options.nats === undefined;
  const nats: NatsServerHandle = options.nats ?? (await startNatsServer());
  const upstream = await new ScriptedUpstreamProxy(options.upstreamHosts ?? {}).start();
  const storePath = join(dir, 'berth.db');
  const egressDir = join(dir, 'egress');
  const workspaceDir = join(dir, 'workspaces');
  const storeUrl = options.storeUrl ?? `sqlite:${storePath}`;
  const common = { BERTH_STORE_URL: storeUrl, DOCKER_HOST: engine.dockerHost, BERTH_LOG_FORMAT: 'json', BERTH_SECRET_KEYS: E2E_SECRET_KEYS, ...options.env };
  const [kernelMetrics, managerMetrics, egressMetrics, port] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const replicaMetrics: number[] = [];
  for (let i = 1; i < (options.managers ?? 1); i++) replicaMetrics.push(await freePort());
  const env: Record<ServiceName, Record<string, string>> = {
    'session-kernel': { ...common, ...nats.env('session-kernel'), BERTH_OUTBOX_RELAY_MS: '200', BERTH_NATS_ACK_WAIT_MS: '5000', BERTH_METRICS_PORT: String(kernelMetrics) },
    egress: {
      ...common,
      ...nats.env('egress'),
      BERTH_EGRESS_DIR: egressDir,
      BERTH_EGRESS_CA_DIR: join(dir, 'egress-ca'),
      BERTH_MODEL_BASE_URL: options.modelBaseUrl,
      BERTH_MODEL_API_KEY: E2E_MODEL_KEY,
      BERTH_EGRESS_UPSTREAM_PROXY: upstream.url,
      BERTH_METRICS_PORT: String(egressMetrics),
      ...trustedModelHosts(options.trustedModelEndpoints ?? []),
      ...options.egressEnv,
    },
    'sandbox-manager': {
      ...common,
      ...nats.env('sandbox-manager'),
      BERTH_EGRESS_DIR: egressDir,
      BERTH_METRICS_PORT: String(managerMetrics),
      BERTH_SANDBOX_IMAGE: engine.harnessImage,
      BERTH_SANDBOX_SCOPE: scope,
      BERTH_NATS_ACK_WAIT_MS: '5000',
      BERTH_WORKSPACE_DIR: workspaceDir,
      ...options.managerEnv,
    },
    gateway: { ...common, ...nats.env('gateway'), BERTH_NATS_ISSUER: nats.issuerFile, PORT: String(port), HOST: '127.0.0.1' },
  };
  const services = new Map<ServiceName, ServiceProcess>();
  const started: ServiceProcess[] = [];
  const logs = () => started.map((s) => `--- ${s.name}\n${s.output()}`).join('\n');
  const start = async (name: ServiceName, extra: Record<string, string> = {}) => {
    const service = await startService(name, { ...env[name], ...extra });
    services.set(name, service);
    started.push(service);
  };
  const get = (name: ServiceName) => services.get(name) as ServiceProcess;
  const replicas: ServiceProcess[] = [];
  try {
    await start('session-kernel');
    await start('egress');
    await start('sandbox-manager');
    for (const metricsPort of replicaMetrics) {
      const replica = await startService('sandbox-manager', { ...env['sandbox-manager'], BERTH_METRICS_PORT: String(metricsPort) });
      replicas.push(replica);
      started.push(replica);
    }
    await start('gateway');
    const keyOf = (owner: string) =>
      execFileSync(process.execPath, ['-r', '@swc-node/register', 'apps/gateway/src/cli/create-api-key.ts', '--owner', owner, '--store', common.BERTH_STORE_URL], {
        cwd: join(__dirname, '..', '..', '..', '..'),
        encoding: 'utf8',
      }).trim();
    const apiKey = keyOf('e2e');
    const otherApiKey = keyOf('e2e-other');
    const runtime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost, managedLabels: { 'berth.scope': scope }, egressRoot: egressDir });
    const secrets = [E2E_MODEL_KEY, E2E_SECRET_KEYS.slice(E2E_SECRET_KEYS.indexOf(':') + 1), apiKey, otherApiKey];
    return {
      gatewayUrl: `http://127.0.0.1:${port}`,
      apiKey,
      otherApiKey,
      runtime,
      scope,
      upstream,
      natsUrl: nats.url,
      storePath,
      storeUrl,
      metricsUrls: {
        gateway: `http://127.0.0.1:${port}/metrics`,
        'session-kernel': `http://127.0.0.1:${kernelMetrics}/metrics`,
        'sandbox-manager': `http://127.0.0.1:${managerMetrics}/metrics`,
        egress: `http://127.0.0.1:${egressMetrics}/metrics`,
      },
      secrets,
      manager: () => get('sandbox-manager'),
      managers: () => [get('sandbox-manager'), ...replicas],
      managerMetricsUrls: [managerMetrics, ...replicaMetrics].map((p) => `http://127.0.0.1:${p}/metrics`),
      egress: () => get('egress'),
      async restartManager(extraEnv = {}) {
        await get('sandbox-manager').kill();
        await start('sandbox-manager', extraEnv);
      },
      async restartEgress() {
        await get('egress').kill();
        await start('egress');
      },
      killManager: () => get('sandbox-manager').kill(),
      startManager: (extraEnv = {}) => start('sandbox-manager', extraEnv),
      logs,
      async stop() {
        await services.get('gateway')?.stop();
        for (const replica of replicas) await replica.stop();
        for (const name of ['sandbox-manager', 'egress', 'session-kernel'] as const) await services.get(name)?.stop();
        for (const c of await runtime.list({ 'berth.scope': scope })) await runtime.remove(c.id);
        releaseWorkspaceMounts(workspaceDir);
        await removeWorkspaceVolumes(runtime, scope);
        if (ownNats) await nats.stop();
        await upstream.close();
        rmSync(dir, { recursive: true, force: true });
        // Every end-to-end suite on this platform checks what the services wrote: JSON lines, no secret (after cleanup, so a failure leaves no mount behind).
        for (const s of started) assertCleanLog(s.name, s.output(), secrets);
      },
    };
  } catch (error) {
    for (const s of started) await s.kill();
    if (ownNats) await nats.stop();
    await upstream.close();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logs()}`);
  }
}

/** The environment config end-to-end tests create, with `over` (harness, packages, …) on top: the default network (the egress). */
export function e2eEnvironmentConfig(over: Record<string, unknown> = {}): Anthropic.Beta.Environments.BetaCloudConfigParams {
  return { type: 'cloud', networking: { type: 'unrestricted' }, ...over } as Anthropic.Beta.Environments.BetaCloudConfigParams;
}

/** Each line a service wrote parses as one JSON object, and none contains a secret. */
export function assertCleanLog(service: string, output: string, secrets: readonly string[]): void {
  const lines = output.split('\n').filter((l) => l.trim() !== '');
  for (const line of lines) {
    for (const secret of secrets) if (line.includes(secret)) throw new Error(`${service} logged a secret: ${line.slice(0, 300)}`);
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new Error(`${service} wrote a line that is not JSON: ${line.slice(0, 300)}`);
    }
    if (typeof parsed !== 'object' || parsed === null || (parsed as { service?: unknown }).service !== service) {
      throw new Error(`${service} wrote a line without its service field: ${line.slice(0, 300)}`);
    }
  }
}

/** Volume workspaces (a manager that is not root) carry the scope label too. */
async function removeWorkspaceVolumes(runtime: DockerSandboxRuntime, scope: string): Promise<void> {
  const { Volumes } = await runtime.docker.listVolumes({ filters: JSON.stringify({ label: [`berth.scope=${scope}`] }) });
  for (const volume of Volumes ?? []) await runtime.docker.getVolume(volume.Name).remove().catch(() => undefined);
}

/** Polls `probe` every 50 ms until it yields a value; on timeout the error carries `logs()` (service output). */
export async function waitFor<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number, logs = () => ''): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
