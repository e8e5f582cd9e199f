import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CUSTOM_TOOLS_SOCKET_FILE } from '@berth/harness';
import { DEFAULT_SANDBOX_CONFIG, type SandboxConfig } from '@berth/sandbox-domain';
import { LeaseLock, SandboxProvisioner } from '@berth/sandbox-lifecycle';
import { DockerSandboxRuntime } from '@berth/docker';
import { systemClock } from '@berth/core';
import { ensureDockerTestEngine, MemoryLeases, releaseWorkspaceMounts, silentLogger, startPrivateDockerEngine, type PrivateDockerEngine } from '@berth/testing';
import { emptySessionView } from '@berth/sandbox-workflow';
import { ManagerConfigSchema } from '../config/manager.config';
import { CustomToolSockets } from '../custom-tools/custom-tool-sockets';
import { openSandboxEngines, type SandboxEngines } from './sandbox-engines';

/**
 * The manager's engines with BERTH_SANDBOX_HOSTS: the shared engine as host a and a dockerd of the
 * test's own as host b. A sandbox placed on b has its platform directory under b's egress_dir, and
 * that is where the manager looks for its egress socket and serves its custom tools socket (not
 * under BERTH_EGRESS_DIR, which several hosts do not use).
 */
jest.setTimeout(120_000);

const shared = ensureDockerTestEngine();
const run = `se${randomBytes(4).toString('hex')}`;
const scopeLabels = { 'berth.scope': run };
const dirs = { a: mkdtempSync('/tmp/bse-a-'), b: mkdtempSync('/tmp/bse-b-'), unused: mkdtempSync('/tmp/bse-x-'), workspaces: mkdtempSync('/tmp/bse-ws-') };
const config: SandboxConfig = { ...DEFAULT_SANDBOX_CONFIG, image: shared.baseImage, network: 'none', memoryBytes: 128 * 1024 * 1024, nanoCpus: 500_000_000, pidsLimit: 64, workspaceBytes: 32 * 1024 * 1024 };
let b: PrivateDockerEngine;
let engines: SandboxEngines;

beforeAll(async () => {
  b = await startPrivateDockerEngine('tools-b');
  await b.loadImage(shared.baseImage, new DockerSandboxRuntime({ dockerHost: shared.dockerHost }).docker);
  const hosts = [
    // a takes one sandbox, b two: the first sandbox goes to b (the most free places).
    { name: 'a', docker_host: shared.dockerHost, egress_dir: dirs.a, max_sandboxes: 1 },
    { name: 'b', docker_host: b.dockerHost, egress_dir: dirs.b, max_sandboxes: 2 },
  ];
  const manager = ManagerConfigSchema.parse({
    BERTH_SANDBOX_HOSTS: JSON.stringify(hosts),
    BERTH_EGRESS_DIR: dirs.unused,
    BERTH_WORKSPACE_STORAGE: 'loop',
    BERTH_WORKSPACE_DIR: dirs.workspaces,
    BERTH_SANDBOX_SCOPE: run,
  });
  engines = await openSandboxEngines(manager, scopeLabels, silentLogger, new LeaseLock(new MemoryLeases(), 'manager', systemClock));
});

afterAll(async () => {
  engines?.close();
  await b?.stop();
  releaseWorkspaceMounts(dirs.workspaces);
  for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
});

describe('sandbox engines on several Docker hosts', () => {
  it("finds a sandbox's egress socket and serves its custom tools socket under its own host's egress directory", async () => {
    const provisioner = new SandboxProvisioner({ runtime: engines.runtime, workspaces: engines.workspaces, scopeLabels });
    const sessionId = `sesn_${run}`;
    const { sandbox } = await provisioner.acquire({ sessionId, generation: 1, environmentId: `env_${run}`, config });
    try {
      expect(sandbox.host).toBe('b');
      const egressSocket = await engines.egressSocketOf(sandbox.name);
      expect(egressSocket?.startsWith(`${dirs.b}/`)).toBe(true);
      expect(existsSync(dirname(egressSocket as string))).toBe(true);

      const tools = new CustomToolSockets({ egressSocketOf: engines.egressSocketOf, view: async () => emptySessionView(), log: silentLogger });
      await tools.serve(sessionId, sandbox.name);
      try {
        expect(existsSync(join(dirname(egressSocket as string), CUSTOM_TOOLS_SOCKET_FILE))).toBe(true);
      } finally {
        await tools.stop();
      }
      expect(readdirSync(dirs.unused)).toEqual([]);
    } finally {
      await provisioner.release(sandbox.name);
    }
  });
});
