import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock, type Clock } from '@berth/core';
import { dockerFromHost, EGRESS_DIR_LABEL, environmentImageHash, IMAGE_BUILD_LABEL } from '@berth/docker';
import type { BerthStore, ImageRecipe, SandboxImages } from '@berth/ports';
import { ABANDONED_BUILD_GRACE_MS, IMAGE_BUILD_KEEPALIVE_CMD } from '@berth/sandbox-domain';
import { LeaseLock, sweepImageBuilds } from '@berth/sandbox-lifecycle';
import { createStore } from '@berth/store';
import { ensureDockerTestEngine, silentLogger, waitUntil } from '@berth/testing';
import { ManagerConfigSchema } from '../config/manager.config';
import { openSandboxEngines } from './sandbox-engines';

/**
 * Image builds of several sandbox-managers on one engine and one store, on the real engine, each
 * composed as the manager composes it (`openSandboxEngines`, the store's lease lock): a manager
 * killed (SIGKILL, its own process) mid-build leaves its build container; another manager's sweep
 * removes it with its egress directory once its build lease has lapsed, while a live manager's
 * build goes on untouched, and a third manager asking for that same image waits for it instead of
 * building it again.
 */
jest.setTimeout(60_000);

const ROOT = join(__dirname, '..', '..', '..', '..');
const engine = ensureDockerTestEngine({ harness: true });
const docker = dockerFromHost(engine.dockerHost);
const run = randomBytes(4).toString('hex');
const scope = `ibs${run}`;
// Short: a unix socket path under it must fit.
const dir = mkdtempSync('/tmp/bibs-');
const egressRoot = join(dir, 'egress');
/** The manager's configuration, as variables: its own process gets them as its environment. */
const managerEnv = {
  DOCKER_HOST: engine.dockerHost,
  BERTH_STORE_URL: `sqlite:${join(dir, 'berth.db')}`,
  BERTH_EGRESS_DIR: egressRoot,
  BERTH_SANDBOX_SCOPE: scope,
  BERTH_WORKSPACE_STORAGE: 'volume',
  BERTH_BUILD_CA_DIR: '',
};
let store: BerthStore;
const tags: string[] = [];

/** A build whose one step waits for /tmp/go in its container, which the test makes when it lets the build finish. */
const recipe = (name: string): ImageRecipe => ({
  base: engine.harnessImage as string,
  steps: [['/bin/sh', '-c', 'while [ ! -e /tmp/go ]; do sleep 0.2; done']],
  env: { BERTH_TEST_BUILD: `${run}-${name}` },
  files: [],
  keepalive: IMAGE_BUILD_KEEPALIVE_CMD,
  grant: { environmentId: `env_${run}`, ecosystems: [], allowedHosts: [] },
});

/** A sandbox-manager's image builds, as `main.ts` opens them. */
const manager = async (holder: string): Promise<SandboxImages> =>
  (await openSandboxEngines(ManagerConfigSchema.parse(managerEnv), { 'berth.scope': scope }, silentLogger, new LeaseLock(store.leases, holder, systemClock))).images;

const buildContainers = (tag: string) => docker.listContainers({ all: true, filters: { label: [`${IMAGE_BUILD_LABEL}=${tag}`, `berth.scope=${scope}`] } });

beforeAll(async () => {
  mkdirSync(egressRoot);
  store = createStore(managerEnv.BERTH_STORE_URL);
  await store.init();
});

afterAll(async () => {
  const left = await docker.listContainers({ all: true, filters: { label: [IMAGE_BUILD_LABEL, `berth.scope=${scope}`] } });
  for (const c of left) await docker.getContainer(c.Id).remove({ force: true }).catch(() => undefined);
  for (const tag of tags) await docker.getImage(`berth/env:${tag}`).remove({ force: true }).catch(() => undefined);
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('image builds left by a killed sandbox-manager', () => {
  it("are removed by another manager's sweep with their egress directories; a live manager's build is not, and a third manager waits for it", async () => {
    const baseId = (await docker.getImage(engine.harnessImage as string).inspect()).Id;
    const killedRecipe = recipe('killed');
    const liveRecipe = recipe('live');
    const killedTag = environmentImageHash(baseId, killedRecipe);
    const liveTag = environmentImageHash(baseId, liveRecipe);
    tags.push(killedTag, liveTag);

    // Manager A builds in a process of its own, and is killed once its build container runs.
    const child = spawn(process.execPath, ['-r', '@swc-node/register', join('apps', 'sandbox-manager', 'src', 'testing', 'image-build-process.ts')], {
      cwd: ROOT,
      env: { ...process.env, ...managerEnv, BERTH_TEST_RECIPE: JSON.stringify(killedRecipe) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let killed;
    try {
      killed = await waitUntil(async () => (await buildContainers(killedTag)).find((c) => c.State === 'running'), { timeoutMs: 30_000, intervalMs: 100, what: "manager A's build container" }).catch((e: unknown) => {
        throw new Error(`${String(e)}\nmanager A's output:\n${output}`);
      });
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const killedEgress = join(egressRoot, killed.Labels[EGRESS_DIR_LABEL] as string);
    expect(existsSync(killedEgress)).toBe(true);

    // Manager C builds another image and stays alive; manager D asks for C's image meanwhile.
    const live = (await manager('manager-c')).ensure(liveRecipe);
    const liveContainer = await waitUntil(async () => (await buildContainers(liveTag)).find((c) => c.State === 'running'), { timeoutMs: 20_000, intervalMs: 100, what: "manager C's build container" });
    const waiting = (await manager('manager-d')).ensure(liveRecipe);

    // Manager B sweeps until A's build is gone. B's clock runs the sweep's grace ahead, so it sees
    // A's lease lapse (5 s after A's last renewal) as over a minute ago; C's lease, renewed, never.
    const sweeper = await manager('manager-b');
    const graceLater: Clock = { now: () => new Date(Date.now() + ABANDONED_BUILD_GRACE_MS) };
    const removed: string[] = [];
    await waitUntil(
      async () => {
        removed.push(...(await sweepImageBuilds({ images: sweeper, leases: store.leases, clock: graceLater })));
        return (await buildContainers(killedTag)).length === 0;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: "manager A's build container removed by B's sweep" },
    );
    expect(removed).toEqual([killed.Id]);
    expect(existsSync(killedEgress)).toBe(false);
    // C's build is untouched, and D started none of its own: one build container of that image.
    expect((await buildContainers(liveTag)).map((c) => ({ id: c.Id, state: c.State }))).toEqual([{ id: liveContainer.Id, state: 'running' }]);
    expect(existsSync(join(egressRoot, liveContainer.Labels[EGRESS_DIR_LABEL] as string))).toBe(true);

    // C's build finishes: C built the image, D reuses it; nothing is left to sweep.
    const go = await docker.getContainer(liveContainer.Id).exec({ Cmd: ['touch', '/tmp/go'], User: '0:0' });
    await go.start({});
    const [c, d] = await Promise.all([live, waiting]);
    expect(c).toMatchObject({ image: `berth/env:${liveTag}`, built: true });
    expect(d).toMatchObject({ image: `berth/env:${liveTag}`, built: false });
    expect(await sweeper.builds()).toEqual([]);
    expect(readdirSync(egressRoot).filter((name) => /^[0-9a-f]{16}$/.test(name))).toEqual([]);
  });
});
