import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerSandboxRuntime } from '@berth/docker';
import { ensureDockerTestEngine, freePort, startNatsServer, type NatsServerHandle } from '@berth/testing';
import { startService, type ServiceProcess } from './service-process';

export type E2ePlatform = Readonly<{
  gatewayUrl: string;
  apiKey: string;
  runtime: DockerSandboxRuntime;
  scope: string;
  /** GET /metrics of each service (the gateway's on its HTTP port). */
  metricsUrls: Readonly<Record<'gateway' | 'session-kernel' | 'sandbox-manager', string>>;
  /** The secrets this platform was started with: none may appear in any service's log. */
  secrets: readonly string[];
  manager(): ServiceProcess;
  /** Kills the sandbox-manager with SIGKILL and starts a new one (same configuration). */
  restartManager(extraEnv?: Record<string, string>): Promise<void>;
  /** Kills the sandbox-manager with SIGKILL (`startManager` brings one back). */
  killManager(): Promise<void>;
  startManager(extraEnv?: Record<string, string>): Promise<void>;
  logs(): string;
  stop(): Promise<void>;
}>;

/**
 * The whole platform for end-to-end tests: a nats-server, the real session-kernel,
 * sandbox-manager and gateway as processes over one SQLite file, the real Docker engine with the
 * harness image. Sandboxes carry a scope label unique to this run and are removed at the end.
 */
export async function startE2ePlatform(options: { modelBaseUrl: string; managerEnv?: Record<string, string>; env?: Record<string, string> }): Promise<E2ePlatform> {
  const engine = ensureDockerTestEngine({ harness: true });
  if (engine.harnessImage === null) throw new Error('the harness image could not be built');
  const dir = mkdtempSync(join(tmpdir(), 'berth-e2e-'));
  const scope = `e2e${process.pid}${Date.now().toString(36)}`;
  const nats: NatsServerHandle = await startNatsServer();
  const common = { NATS_URL: nats.url, BERTH_STORE_URL: `sqlite:${join(dir, 'berth.db')}`, DOCKER_HOST: engine.dockerHost, BERTH_LOG_FORMAT: 'json', ...options.env };
  const [kernelMetrics, managerMetrics] = [await freePort(), await freePort()];
  const managerEnv = {
    ...common,
    BERTH_MODEL_BASE_URL: options.modelBaseUrl,
    BERTH_MODEL_API_KEY: MODEL_KEY,
    BERTH_METRICS_PORT: String(managerMetrics),
    BERTH_SANDBOX_IMAGE: engine.harnessImage,
    BERTH_SANDBOX_SCOPE: scope,
    BERTH_NATS_ACK_WAIT_MS: '5000',
    ...options.managerEnv,
  };
  const services: ServiceProcess[] = [];
  const logs = () => services.map((s) => `--- ${s.name}\n${s.output()}`).join('\n');
  try {
    services.push(await startService('session-kernel', { ...common, BERTH_OUTBOX_RELAY_MS: '200', BERTH_NATS_ACK_WAIT_MS: '5000', BERTH_METRICS_PORT: String(kernelMetrics) }));
    services.push(await startService('sandbox-manager', managerEnv));
    const port = await freePort();
    services.push(await startService('gateway', { ...common, PORT: String(port), HOST: '127.0.0.1' }));
    const apiKey = execFileSync(process.execPath, ['-r', '@swc-node/register', 'apps/gateway/src/cli/create-api-key.ts', '--owner', 'e2e', '--store', common.BERTH_STORE_URL], {
      cwd: join(__dirname, '..', '..', '..', '..'),
      encoding: 'utf8',
    }).trim();
    const runtime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost, managedLabels: { 'berth.scope': scope } });
    const secrets = [MODEL_KEY, apiKey];
    return {
      gatewayUrl: `http://127.0.0.1:${port}`,
      apiKey,
      runtime,
      scope,
      metricsUrls: {
        gateway: `http://127.0.0.1:${port}/metrics`,
        'session-kernel': `http://127.0.0.1:${kernelMetrics}/metrics`,
        'sandbox-manager': `http://127.0.0.1:${managerMetrics}/metrics`,
      },
      secrets,
      manager: () => services[1],
      async restartManager(extraEnv = {}) {
        await services[1].kill();
        services[1] = await startService('sandbox-manager', { ...managerEnv, ...extraEnv });
      },
      killManager: () => services[1].kill(),
      async startManager(extraEnv = {}) {
        services[1] = await startService('sandbox-manager', { ...managerEnv, ...extraEnv });
      },
      logs,
      async stop() {
        for (const s of [...services].reverse()) await s.stop();
        // Every end-to-end suite on this platform checks what the services wrote: JSON lines, no secret.
        for (const s of services) assertCleanLog(s.name, s.output(), secrets);
        for (const c of await runtime.list({ 'berth.scope': scope })) await runtime.remove(c.id);
        await nats.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const s of services) await s.kill();
    await nats.stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${logs()}`);
  }
}

/** The model key every e2e manager holds: a harness gets it, a log line never. */
const MODEL_KEY = 'sk-scripted-e2e-model-key-0123456789';

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
