import type Anthropic from '@anthropic-ai/sdk';
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
  manager(): ServiceProcess;
  /** Kills the sandbox-manager with SIGKILL and starts a new one (same configuration). */
  restartManager(extraEnv?: Record<string, string>): Promise<void>;
  logs(): string;
  stop(): Promise<void>;
}>;

/**
 * The whole platform for end-to-end tests: a nats-server, the real session-kernel,
 * sandbox-manager and gateway as processes over one SQLite file, the real Docker engine with the
 * harness image. Sandboxes carry a scope label unique to this run and are removed at the end.
 */
export async function startE2ePlatform(options: { modelBaseUrl: string; managerEnv?: Record<string, string> }): Promise<E2ePlatform> {
  const engine = ensureDockerTestEngine({ harness: true });
  if (engine.harnessImage === null) throw new Error('the harness image could not be built');
  const dir = mkdtempSync(join(tmpdir(), 'berth-e2e-'));
  const scope = `e2e${process.pid}${Date.now().toString(36)}`;
  const nats: NatsServerHandle = await startNatsServer();
  const common = { NATS_URL: nats.url, BERTH_STORE_URL: `sqlite:${join(dir, 'berth.db')}`, DOCKER_HOST: engine.dockerHost };
  const managerEnv = {
    ...common,
    BERTH_MODEL_BASE_URL: options.modelBaseUrl,
    BERTH_MODEL_API_KEY: 'sk-scripted-not-a-real-key',
    BERTH_SANDBOX_IMAGE: engine.harnessImage,
    BERTH_SANDBOX_SCOPE: scope,
    BERTH_NATS_ACK_WAIT_MS: '5000',
    ...options.managerEnv,
  };
  const services: ServiceProcess[] = [];
  const logs = () => services.map((s) => `--- ${s.name}\n${s.output()}`).join('\n');
  try {
    services.push(await startService('session-kernel', { ...common, BERTH_OUTBOX_RELAY_MS: '200', BERTH_NATS_ACK_WAIT_MS: '5000' }));
    services.push(await startService('sandbox-manager', managerEnv));
    const port = await freePort();
    services.push(await startService('gateway', { ...common, PORT: String(port), HOST: '127.0.0.1' }));
    const apiKey = execFileSync(process.execPath, ['-r', '@swc-node/register', 'apps/gateway/src/cli/create-api-key.ts', '--owner', 'e2e', '--store', common.BERTH_STORE_URL], {
      cwd: join(__dirname, '..', '..', '..', '..'),
      encoding: 'utf8',
    }).trim();
    const runtime = new DockerSandboxRuntime({ dockerHost: engine.dockerHost, managedLabels: { 'berth.scope': scope } });
    return {
      gatewayUrl: `http://127.0.0.1:${port}`,
      apiKey,
      runtime,
      scope,
      manager: () => services[1],
      async restartManager(extraEnv = {}) {
        await services[1].kill();
        services[1] = await startService('sandbox-manager', { ...managerEnv, ...extraEnv });
      },
      logs,
      async stop() {
        for (const s of [...services].reverse()) await s.stop();
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

/**
 * The environment config end-to-end tests create, with `over` (harness, packages, …) on top. The
 * sandbox uses network `host` to reach the scripted model and MCP servers on 127.0.0.1 until the
 * egress proxy (issue 12) gives the default network a way out; then this is the one line to drop.
 */
export function e2eEnvironmentConfig(over: Record<string, unknown> = {}): Anthropic.Beta.Environments.BetaCloudConfigParams {
  return { type: 'cloud', networking: { type: 'unrestricted' }, network: 'host', ...over } as Anthropic.Beta.Environments.BetaCloudConfigParams;
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
