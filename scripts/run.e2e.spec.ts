import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDockerTestEngine, freePort } from '@berth/testing';
import { chromium } from 'playwright-core';

/**
 * The README's first command as a user runs it: `npm start` in a terminal, the console opened at
 * the URL it prints and signed into with the key it prints, then Ctrl-C. The terminal is played by
 * a process group of our own (Ctrl-C is SIGINT to the foreground group), the browser by headless
 * Chromium. DOCKER_HOST names the engine the suite already runs: the script must use it and start
 * no dockerd of its own (the list of dockerd processes is compared before and after).
 */
jest.setTimeout(600_000);

const REPO = join(__dirname, '..');
const dockerdPids = () => spawnSync('pgrep', ['-x', 'dockerd'], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).sort();

describe('npm start', () => {
  let home: string;
  let child: ChildProcess;
  let output = '';
  let exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  let dockerHost: string;
  let dockerdBefore: string[];

  beforeAll(async () => {
    dockerHost = ensureDockerTestEngine({ harness: true }).dockerHost;
    dockerdBefore = dockerdPids();
    home = mkdtempSync(join(tmpdir(), 'berth-run-'));
    const port = await freePort();
    child = spawn('npm', ['start'], {
      cwd: REPO,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, BERTH_HOME: home, PORT: String(port), DOCKER_HOST: dockerHost },
    });
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    const deadline = Date.now() + 540_000;
    while (!output.includes('Ctrl-C stops Berth.')) {
      if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output}`);
      if (Date.now() > deadline) throw new Error(`npm start not ready:\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  afterAll(async () => {
    if (child && child.exitCode === null && child.signalCode === null) process.kill(-(child.pid as number), 'SIGKILL');
    rmSync(home, { recursive: true, force: true });
  });

  it('prepares in a few readable lines, using the Docker engine DOCKER_HOST names without starting another', () => {
    const preparation = output.slice(0, output.indexOf('Berth is running.')).trim().split('\n');
    expect(preparation.length).toBeLessThanOrEqual(15);
    expect(output).toContain(`using the Docker engine at ${dockerHost} (from DOCKER_HOST)`);
    expect(dockerdPids()).toEqual(dockerdBefore);
    expect(readFileSync(join(home, 'logs', 'setup.log'), 'utf8')).toMatch(/harness=berth\/harness:/);
  });

  it('serves the console at the printed URL, and the printed key signs in', async () => {
    const consoleUrl = /Console:\s+(\S+)/.exec(output)?.[1] as string;
    const key = /API key:\s+(\S+)/.exec(output)?.[1] as string;
    const profile = mkdtempSync(join(tmpdir(), 'berth-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    try {
      const page = context.pages()[0] ?? (await context.newPage());
      const res = await page.goto(consoleUrl);
      expect(res?.status()).toBe(200);
      await page.getByTestId('signin-key').fill(key);
      await page.getByTestId('signin-submit').click();
      await page.getByTestId('nav-agents').click();
      await page.getByTestId('empty').waitFor({ timeout: 15_000 });
    } finally {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });

  it('stops everything on Ctrl-C and exits 0, saying "stopped"', async () => {
    process.kill(-(child.pid as number), 'SIGINT');
    const { code, signal } = await exit;
    expect(signal).toBeNull();
    expect(output).toContain('berth: stopped.');
    expect(output).not.toMatch(/unexpectedly/);
    expect(code).toBe(0);
    // Each service wrote JSON lines and said it stopped.
    for (const file of readdirSync(join(home, 'logs')).filter((f) => f !== 'setup.log' && f !== 'nats.log')) {
      const lines = readFileSync(join(home, 'logs', file), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { msg: string });
      expect(lines.map((l) => l.msg)).toContain('stopped');
    }
  });
});

describe('npm start -- --help', () => {
  it('lists the knobs and starts nothing', () => {
    const result = spawnSync('bash', [join(REPO, 'scripts', 'run.sh'), '--help'], { encoding: 'utf8' });
    expect(result.status).toBe(0);
    for (const knob of ['BERTH_HOME', 'PORT', 'DOCKER_HOST', 'BERTH_MODEL_BASE_URL', 'BERTH_MODEL_API_KEY', 'BERTH_LOG_LEVEL', 'OTEL_EXPORTER_OTLP_ENDPOINT']) expect(result.stdout).toContain(knob);
  });
});
