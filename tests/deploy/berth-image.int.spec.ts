import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDockerTestEngine, freePort, startNatsServer, type NatsServerHandle } from '@berth/testing';

/**
 * The service image of deploy/images/berth.Dockerfile, built on the locally built base (no
 * registry pull; scripts/docker/build-berth-image.sh, a no-op when its inputs are unchanged) and
 * run the way the deploy files run it: the gateway and the session-kernel as the non-root user on
 * a read-only root, sharing the SQLite volume, against a nats-server of this test (with auth: each
 * container gets its own service's creds file mounted, as the deploy files' secrets do).
 */
jest.setTimeout(1_500_000);

const REPO = join(__dirname, '..', '..');
const tag = `imgtest-${process.pid}`;

describe('the berth image', () => {
  let dockerHost: string;
  let image: string;
  let nats: NatsServerHandle;
  let secrets: string;
  const docker = (...args: string[]) => execFileSync('docker', args, { encoding: 'utf8', env: { ...process.env, DOCKER_HOST: dockerHost } }).trim();

  beforeAll(async () => {
    dockerHost = ensureDockerTestEngine().dockerHost;
    const built = execFileSync('bash', [join(REPO, 'scripts', 'docker', 'build-berth-image.sh')], { encoding: 'utf8', env: { ...process.env, DOCKER_HOST: dockerHost } });
    image = /^berth=(\S+)$/m.exec(built)?.[1] as string;
    nats = await startNatsServer();
    // The image's user (uid 1000) reads its creds as it would a mounted secret.
    secrets = mkdtempSync(join(tmpdir(), 'berth-image-secrets-'));
    for (const service of ['gateway', 'session-kernel'] as const) {
      copyFileSync(nats.credsFile(service), join(secrets, `${service}.creds`));
      chmodSync(join(secrets, `${service}.creds`), 0o444);
    }
  });
  afterAll(async () => {
    for (const name of [`${tag}-gateway`, `${tag}-kernel`]) spawnSync('docker', ['rm', '-f', name], { env: { ...process.env, DOCKER_HOST: dockerHost } });
    spawnSync('docker', ['volume', 'rm', '-f', `${tag}-data`], { env: { ...process.env, DOCKER_HOST: dockerHost } });
    await nats?.stop();
    if (secrets) rmSync(secrets, { recursive: true, force: true });
  });

  it('runs the gateway and the kernel: ready, console and /metrics served, JSON logs', async () => {
    expect(image).toMatch(/^berth\/berth:[0-9a-f]{16}$/);
    expect(docker('image', 'inspect', '--format', '{{.Config.User}}', image)).toBe('node');
    const [port, kernelMetrics] = [await freePort(), await freePort()];
    // Host network: the containers reach the test's nats-server on loopback (the engine has no bridge).
    const run = (name: string, service: 'gateway' | 'session-kernel', env: Record<string, string>, ...cmd: string[]) =>
      docker('run', '-d', '--name', name, '--network', 'host', '--read-only', '--tmpfs', '/tmp:exec', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges',
        '-v', `${tag}-data:/var/lib/berth`, '-v', `${join(secrets, `${service}.creds`)}:/run/secrets/nats_creds:ro`,
        ...Object.entries({ NATS_URL: nats.url, NATS_CREDS: '/run/secrets/nats_creds', ...env }).flatMap(([k, v]) => ['-e', `${k}=${v}`]), image, ...cmd);
    run(`${tag}-kernel`, 'session-kernel', { BERTH_METRICS_PORT: String(kernelMetrics) }, 'node', '-r', '@swc-node/register', 'apps/session-kernel/src/main.ts');
    run(`${tag}-gateway`, 'gateway', { HOST: '127.0.0.1', PORT: String(port) });

    const base = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 90_000;
    for (;;) {
      const ready = await fetch(`${base}/readyz`).then((r) => r.status === 200, () => false);
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`gateway container not ready:\n${docker('logs', `${tag}-gateway`)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const page = await fetch(`${base}/console/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await (await fetch(`${base}/metrics`)).text()).toContain('berth_http_request_duration_seconds_count{');
    expect(await (await fetch(`http://127.0.0.1:${kernelMetrics}/metrics`)).text()).toContain('berth_consumer_pending{');

    for (const [name, service] of [[`${tag}-gateway`, 'gateway'], [`${tag}-kernel`, 'session-kernel']]) {
      const out = execFileSync('docker', ['logs', name], { encoding: 'utf8', env: { ...process.env, DOCKER_HOST: dockerHost }, stdio: ['ignore', 'pipe', 'pipe'] });
      const lines = out.trim().split('\n');
      expect(lines.some((l) => l.includes('"msg":"ready'))).toBe(true);
      for (const line of lines) expect(JSON.parse(line)).toMatchObject({ service });
    }
  });

  it("has what the egress needs: its sources, and the openssl command it issues TLS certificates with (a CA made as the image's user on a read-only root)", () => {
    const out = docker('run', '--rm', '--read-only', '--tmpfs', '/tmp:exec', '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '--network', 'none', image,
      'sh', '-c', 'test -f apps/egress/src/main.ts && echo EGRESS-SOURCES; openssl version; cd /tmp && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout k.pem -out c.pem -days 1 -subj /CN=t 2>/dev/null && echo CA-MADE');
    expect(out).toContain('EGRESS-SOURCES');
    expect(out).toMatch(/^OpenSSL 3\./m);
    expect(out).toContain('CA-MADE');
  });
});
