import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createStore } from '@berth/store';
import { AnthropicMessagesServer, ensureDockerTestEngine, freePort, startNatsServer, type NatsServerHandle } from '@berth/testing';
import { applyTopology, berthTopology } from '@berth/nats';
import { jetstreamManager } from '@nats-io/jetstream';
import { runCli } from '../cli';

/**
 * `berth doctor` against real things: the suite's Docker engine, a nats-server (with auth) with and
 * without Berth's streams, a SQLite store, a model endpoint on loopback, an egress directory whose sandbox
 * socket answers (a listener in the egress's layout) or does not, and ports where nothing listens.
 */
jest.setTimeout(120_000);

describe('berth doctor', () => {
  let dir: string;
  let nats: NatsServerHandle;
  let model: AnthropicMessagesServer;
  let dockerHost: string;
  let baseImage: string;
  let storeUrl: string;
  let egressDir: string;
  let egressSocket: Server;

  beforeAll(async () => {
    ({ dockerHost, baseImage } = ensureDockerTestEngine());
    dir = mkdtempSync(join(tmpdir(), 'berth-doctor-'));
    storeUrl = `sqlite:${join(dir, 'berth.db')}`;
    const store = createStore(storeUrl);
    await store.init();
    await store.close();
    nats = await startNatsServer();
    model = await new AnthropicMessagesServer().start();
    egressDir = join(dir, 'egress');
    mkdirSync(join(egressDir, '0123456789abcdef', 'socket'), { recursive: true });
    egressSocket = createServer((socket) => socket.end());
    await new Promise<void>((resolve) => egressSocket.listen(join(egressDir, '0123456789abcdef', 'socket', 'egress.sock'), resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => egressSocket?.close(resolve));
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
      {
        DOCKER_HOST: `unix://${join(dir, 'no-engine.sock')}`,
        ...nats.env('doctor'),
        BERTH_STORE_URL: `sqlite:${join(dir, 'missing.db')}`,
        BERTH_MODEL_BASE_URL: `http://127.0.0.1:${closed}`,
        BERTH_EGRESS_DIR: join(dir, 'no-egress'),
      },
      '--gateway',
      '--api-url',
      `http://127.0.0.1:${closed}`,
    );
    expect(code).toBe(1);
    expect(out).toMatch(/^FAIL {2}docker engine +unix:\/\/.*no-engine\.sock: .*Start Docker, or point DOCKER_HOST at an engine that runs/m);
    expect(out).toMatch(/^FAIL {2}nats +nats:\/\/127\.0\.0\.1:\d+ answers but has no stream SESSION_CMD, SESSION_EVT: start the session-kernel once/m);
    expect(out).toMatch(/^FAIL {2}store +sqlite:.*missing\.db: no database file at .*Has Berth run with this BERTH_STORE_URL\?/m);
    expect(out).toMatch(/^FAIL {2}model endpoint +http:\/\/127\.0\.0\.1:\d+ is unreachable from this machine: .*ECONNREFUSED/m);
    expect(out).toMatch(/^FAIL {2}egress +.*no-egress does not exist\. Is BERTH_EGRESS_DIR the directory the egress and the sandbox-manager use/m);
    expect(out).toMatch(/^FAIL {2}gateway +http:\/\/127\.0\.0\.1:\d+ does not answer: .*Is the gateway running/m);
    expect(out).toMatch(/checks failed\.$/);
  });

  it('says NATS wants credentials when it has none, and names a file it cannot read', async () => {
    const none = await doctor({ DOCKER_HOST: dockerHost, NATS_URL: nats.url, BERTH_HOME: dir, BERTH_STORE_URL: storeUrl });
    expect(none.out).toMatch(/^FAIL {2}nats +nats:\/\/127\.0\.0\.1:\d+: .*Authorization Violation.*NATS requires credentials: set NATS_CREDS/m);
    const wrong = await doctor({ DOCKER_HOST: dockerHost, NATS_URL: nats.url, NATS_CREDS: join(dir, 'nowhere.creds'), BERTH_STORE_URL: storeUrl });
    expect(wrong.out).toMatch(/^FAIL {2}nats +nats:\/\/127\.0\.0\.1:\d+: NATS_CREDS: cannot read .*nowhere\.creds: ENOENT/m);
  });

  it('passes when everything answers, and reports a missing sandbox image', async () => {
    const nc = await nats.connect();
    await applyTopology(await jetstreamManager(nc), berthTopology());
    await nc.close();
    const env = { DOCKER_HOST: dockerHost, ...nats.env('doctor'), BERTH_STORE_URL: storeUrl, BERTH_MODEL_BASE_URL: model.url, BERTH_EGRESS_DIR: egressDir };

    const good = await doctor({ ...env, BERTH_SANDBOX_IMAGE: baseImage }, '--json');
    expect(good.code).toBe(0);
    const report = JSON.parse(good.out) as { ok: boolean; checks: { name: string; ok: boolean }[] };
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual(['docker engine', 'sandbox image', 'nats', 'store', 'model endpoint', 'egress']);

    const missing = await doctor({ ...env, BERTH_SANDBOX_IMAGE: 'berth/not-built:nothing' });
    expect(missing.code).toBe(1);
    expect(missing.out).toMatch(/^ok {4}docker engine +.*\(Docker \d[^)]*\)/m);
    expect(missing.out).toMatch(/^FAIL {2}sandbox image +berth\/not-built:nothing is not on the engine: build it with scripts\/docker\/build-images.sh/m);
    expect(missing.out).toMatch(/^ok {4}egress +.*: the egress answers for 1 sandbox\(es\)$/m);
    expect(missing.out).toMatch(/1 of 6 checks failed\.$/);
  });

  it('says when sandboxes have a directory but no egress serves them', async () => {
    const stopped = join(dir, 'stopped-egress');
    mkdirSync(join(stopped, 'fedcba9876543210', 'socket'), { recursive: true });
    const { code, out } = await doctor({ DOCKER_HOST: dockerHost, ...nats.env('doctor'), BERTH_STORE_URL: storeUrl, BERTH_MODEL_BASE_URL: model.url, BERTH_SANDBOX_IMAGE: baseImage, BERTH_EGRESS_DIR: stopped });
    expect(code).toBe(1);
    expect(out).toMatch(/^FAIL {2}egress +.*stopped-egress: no egress answers for 1 of 1 sandbox\(es\): .*Is the egress running/m);
  });
});
