import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Which engine ensure-engine.sh picks. An engine already answering on DOCKER_HOST is used as is,
 * with no dockerd started: the "engine" here is a stand-in answering Docker's `GET /_ping` on a
 * unix socket of the test's own, and the script's own-engine paths point at the test's temp dir,
 * so a wrong turn could never touch the shared engine.
 */
const SCRIPT = join(__dirname, 'ensure-engine.sh');

const dockerdPids = (): string[] => {
  const out = spawnSync('pgrep', ['-x', 'dockerd'], { encoding: 'utf8' });
  return out.stdout.split('\n').filter(Boolean).sort();
};

describe('ensure-engine.sh', () => {
  let dir: string;
  let server: Server;
  let sock: string;
  let pings = 0;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-engine-'));
    sock = join(dir, 'docker.sock');
    server = createServer((req, res) => {
      if (req.url?.endsWith('/_ping')) {
        pings++;
        res.writeHead(200, { 'content-type': 'text/plain', 'api-version': '1.41' }).end('OK');
      } else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(sock, resolve));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    // Had the script wrongly started its own engine, it is a private one: stop it (by its pidfile) before cleaning up.
    const pid = spawnSync('cat', [join(dir, 'dockerd.pid')], { encoding: 'utf8' }).stdout.trim();
    if (pid) spawnSync('kill', ['-TERM', pid]);
    rmSync(dir, { recursive: true, force: true });
  });

  // Asynchronous: the stand-in engine lives in this process and must be free to answer.
  const run = (env: Record<string, string>, ...args: string[]) =>
    new Promise<{ status: number; stdout: string; stderr: string }>((resolve) => {
      execFile('bash', [SCRIPT, ...args], { encoding: 'utf8', env: {
        PATH: process.env['PATH'] ?? '',
        BERTH_DOCKER_DATA_ROOT: join(dir, 'data'),
        BERTH_DOCKER_EXEC_ROOT: join(dir, 'exec'),
        BERTH_DOCKER_PIDFILE: join(dir, 'dockerd.pid'),
        BERTH_DOCKER_LOG: join(dir, 'dockerd.log'),
        BERTH_DOCKER_WAIT_SECONDS: '2',
        ...env,
      } }, (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }));
    });

  it('uses the engine answering on DOCKER_HOST, says so, and starts no dockerd', async () => {
    const before = dockerdPids();
    const result = await run({ DOCKER_HOST: `unix://${sock}` }, '--use-system', '--print-env');
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(`export DOCKER_HOST=unix://${sock}\nexport BERTH_ENGINE_STARTED=0\nexport BERTH_ENGINE_SOURCE=docker-host\n`);
    expect(pings).toBeGreaterThan(0);
    expect(dockerdPids()).toEqual(before);
  });

  it('refuses a DOCKER_HOST that does not answer instead of starting something there', async () => {
    const before = dockerdPids();
    const closedPort = execFileSync(process.execPath, ['-e', 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'], { encoding: 'utf8' }).trim();
    const result = await run({ DOCKER_HOST: `tcp://127.0.0.1:${closedPort}` }, '--print-env');
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('does not answer; start that engine or unset DOCKER_HOST');
    const system = await run({ DOCKER_HOST: 'unix:///var/run/docker.sock' }, '--print-env');
    if (system.status !== 0) expect(system.stderr).toContain('the system Docker engine (unix:///var/run/docker.sock) does not answer');
    expect(dockerdPids()).toEqual(before);
  });
});
