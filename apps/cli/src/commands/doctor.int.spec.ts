import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStore } from '@berth/store';
import { AnthropicMessagesServer, ensureDockerTestEngine, freePort, startNatsServer, type NatsServerHandle } from '@berth/testing';
import { applyTopology, berthTopology, connectNats } from '@berth/nats';
import { jetstreamManager } from '@nats-io/jetstream';
import { runCli } from '../cli';

/**
 * `berth doctor` against real things: the suite's Docker engine, a nats-server with and without
 * Berth's streams, a SQLite store, a model endpoint on loopback, and ports where nothing listens.
 */
jest.setTimeout(120_000);

describe('berth doctor', () => {
  let dir: string;
  let nats: NatsServerHandle;
  let model: AnthropicMessagesServer;
  let dockerHost: string;
  let baseImage: string;
  let storeUrl: string;

  beforeAll(async () => {
    ({ dockerHost, baseImage } = ensureDockerTestEngine());
    dir = mkdtempSync(join(tmpdir(), 'berth-doctor-'));
    storeUrl = `sqlite:${join(dir, 'berth.db')}`;
    const store = createStore(storeUrl);
    await store.init();
    await store.close();
    nats = await startNatsServer();
    model = await new AnthropicMessagesServer().start();
  });
  afterAll(async () => {
    await model?.close();
    await nats?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function doctor(env: Record<string, string>, ...argv: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(['doctor', ...argv], { env, io: { out: (t) => out.push(t), err: (t) => err.push(t) } });
    return { code, out: out.join('\n'), err: err.join('\n') };
  }

  it('names what is wrong in plain words and exits 1', async () => {
    const closed = await freePort();
    const { code, out } = await doctor(
      { DOCKER_HOST: `unix://${join(dir, 'no-engine.sock')}`, NATS_URL: nats.url, BERTH_STORE_URL: `sqlite:${join(dir, 'missing.db')}`, BERTH_MODEL_BASE_URL: `http://127.0.0.1:${closed}` },
      '--gateway',
      '--api-url',
      `http://127.0.0.1:${closed}`,
    );
    expect(code).toBe(1);
    expect(out).toMatch(/^FAIL {2}docker engine +unix:\/\/.*no-engine\.sock: .*Start Docker, or point DOCKER_HOST at an engine that runs/m);
    expect(out).toMatch(/^FAIL {2}nats +nats:\/\/127\.0\.0\.1:\d+ answers but has no stream SESSION_CMD, SESSION_EVT: start the session-kernel once/m);
    expect(out).toMatch(/^FAIL {2}store +sqlite:.*missing\.db: no database file at .*Has Berth run with this BERTH_STORE_URL\?/m);
    expect(out).toMatch(/^FAIL {2}model endpoint +http:\/\/127\.0\.0\.1:\d+ is unreachable from this machine: .*ECONNREFUSED/m);
    expect(out).toMatch(/^FAIL {2}gateway +http:\/\/127\.0\.0\.1:\d+ does not answer: .*Is the gateway running/m);
    expect(out).toMatch(/checks failed\.$/);
  });

  it('passes when everything answers, and reports a missing sandbox image', async () => {
    const nc = await connectNats({ url: nats.url, name: 'doctor-test' });
    await applyTopology(await jetstreamManager(nc), berthTopology());
    await nc.close();
    const env = { DOCKER_HOST: dockerHost, NATS_URL: nats.url, BERTH_STORE_URL: storeUrl, BERTH_MODEL_BASE_URL: model.url };

    const good = await doctor({ ...env, BERTH_SANDBOX_IMAGE: baseImage }, '--json');
    expect(good.code).toBe(0);
    const report = JSON.parse(good.out) as { ok: boolean; checks: { name: string; ok: boolean }[] };
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual(['docker engine', 'sandbox image', 'nats', 'store', 'model endpoint']);

    const missing = await doctor({ ...env, BERTH_SANDBOX_IMAGE: 'berth/not-built:nothing' });
    expect(missing.code).toBe(1);
    expect(missing.out).toMatch(/^ok {4}docker engine +.*\(Docker \d[^)]*\)/m);
    expect(missing.out).toMatch(/^FAIL {2}sandbox image +berth\/not-built:nothing is not on the engine: build it with scripts\/docker\/build-images.sh/m);
    expect(missing.out).toMatch(/1 of 5 checks failed\.$/);
  });
});
