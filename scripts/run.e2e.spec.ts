import Anthropic from '@anthropic-ai/sdk';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DockerSandboxRuntime } from '@berth/docker';
import { AnthropicMessagesServer, ensureDockerTestEngine, freePort, reply, ScriptedUpstreamProxy } from '@berth/testing';
import { chromium } from 'playwright-core';

/**
 * The README's first command as a user runs it: `npm start` in a terminal with a model server on
 * host loopback, the console opened at the URL it prints and signed into with the key it prints,
 * a turn through the official SDK on an environment created with no network settings (the model
 * server must see the real key, which only the egress had), then Ctrl-C. The terminal is played
 * by a process group of our own (Ctrl-C is SIGINT to the foreground group), the browser by
 * headless Chromium. DOCKER_HOST names the engine the suite already runs: the script must use it
 * and start no dockerd of its own (no dockerd carries its BERTH_HOME).
 * The sandbox image is the one this run built (not `latest`), the sandboxes' scope is this run's,
 * and the egress's way to other hosts is a scripted proxy on loopback: nothing leaves the machine.
 */
jest.setTimeout(600_000);

const REPO = join(__dirname, '..');
const MODEL_KEY = 'sk-run-sh-real-key-for-the-model';
/**
 * The dockerd processes this run's `npm start` started: they carry its BERTH_HOME in their
 * environment (ensure-engine starts dockerd with the caller's environment). Other engines on the
 * machine, such as the chaos suite's private one starting at the same moment, are not this run's.
 */
const dockerdsOf = (home: string): string[] =>
  spawnSync('pgrep', ['-x', 'dockerd'], { encoding: 'utf8' })
    .stdout.split('\n')
    .filter(Boolean)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(`BERTH_HOME=${home}`);
      } catch {
        return false;
      }
    });

describe('npm start', () => {
  let home: string;
  let child: ChildProcess;
  let output = '';
  let exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  let dockerHost: string;
  let model: AnthropicMessagesServer;
  let upstream: ScriptedUpstreamProxy;
  const scope = `runsh${process.pid}`;

  beforeAll(async () => {
    const engine = ensureDockerTestEngine({ harness: true });
    dockerHost = engine.dockerHost;
    model = await new AnthropicMessagesServer().start();
    upstream = await new ScriptedUpstreamProxy().start();
    home = mkdtempSync(join(tmpdir(), 'berth-run-'));
    const port = await freePort();
    child = spawn('npm', ['start'], {
      cwd: REPO,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        BERTH_HOME: home,
        PORT: String(port),
        DOCKER_HOST: dockerHost,
        BERTH_MODEL_BASE_URL: model.url,
        BERTH_MODEL_API_KEY: MODEL_KEY,
        BERTH_SANDBOX_SCOPE: scope,
        BERTH_SANDBOX_IMAGE: engine.harnessImage as string,
        BERTH_EGRESS_UPSTREAM_PROXY: upstream.url,
      },
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
    // npm start leaves sandboxes for its next start to adopt; this run's are removed here.
    const runtime = new DockerSandboxRuntime({ dockerHost, managedLabels: { 'berth.scope': scope }, egressRoot: join(home, 'egress') });
    for (const c of await runtime.list({ 'berth.scope': scope })) await runtime.remove(c.id);
    await model?.close();
    await upstream?.close();
    // Session workspaces are loop-mounted below $BERTH_HOME and stay mounted for the next start
    // (their sandboxes may still hold them); this run's are let go here, deepest first.
    const mounts = readFileSync('/proc/self/mounts', 'utf8').split('\n').map((line) => line.split(' ')[1]).filter((m) => m !== undefined && m.startsWith(`${home}/`));
    for (const mount of mounts.sort((a, b) => b.length - a.length)) spawnSync('umount', ['--lazy', mount]);
    rmSync(home, { recursive: true, force: true });
  });

  it('prepares in a few readable lines, using the Docker engine DOCKER_HOST names without starting another', () => {
    const preparation = output.slice(0, output.indexOf('Berth is running.')).trim().split('\n');
    expect(preparation.length).toBeLessThanOrEqual(15);
    expect(output).toContain(`using the Docker engine at ${dockerHost} (from DOCKER_HOST)`);
    expect(dockerdsOf(home)).toEqual([]);
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

  it('runs a turn of an agent with its own model, system prompt and tools, on an environment created with no network settings; the model sees them and the real key', async () => {
    const apiUrl = /API:\s+(http:\/\/\S+)\/v1/.exec(output)?.[1] as string;
    const apiKey = /API key:\s+(\S+)/.exec(output)?.[1] as string;
    const client = new Anthropic({ apiKey, baseURL: apiUrl, maxRetries: 0 });
    model.script(reply.text('Hello from the model behind the egress.'));
    const agent = await client.beta.agents.create({
      name: 'first',
      model: 'claude-opus-4-7',
      system: 'You are a pirate. Answer with ahoy.',
      tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'web_fetch', enabled: false }] }],
    });
    const env = await client.beta.environments.create({ name: 'first' });
    expect(env.config).toMatchObject({ network: 'egress', networking: { type: 'unrestricted' } });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const before = model.modelRequests.length;
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Say hello' }] }] });
    const deadline = Date.now() + 180_000;
    let events: { type: string; [k: string]: unknown }[] = [];
    while (!events.some((e) => e.type === 'session.status_idle')) {
      if (Date.now() > deadline) throw new Error(`the turn did not end:\n${JSON.stringify(events)}\n${output}`);
      await new Promise((r) => setTimeout(r, 250));
      events = [];
      for await (const e of client.beta.sessions.events.list(session.id)) events.push(e as unknown as { type: string });
    }
    expect(events.filter((e) => e.type === 'agent.message').map((e) => JSON.stringify(e['content'])).join('')).toContain('Hello from the model behind the egress.');
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect(model.sawCredential(MODEL_KEY)).toBe(true);
    // The agent as defined: its model id, its system prompt, its tools without the one it disabled (Claude Code's WebFetch).
    const request = model.modelRequests[before]?.body as { model?: string; tools?: { name: string }[] };
    expect(request.model).toBe('claude-opus-4-7');
    expect(JSON.stringify(request)).toContain('You are a pirate. Answer with ahoy.');
    const offered = (request.tools ?? []).map((t) => t.name);
    expect(offered).toContain('Bash');
    expect(offered).not.toContain('WebFetch');
    // Only the egress was given the key, and no service logged it.
    for (const file of readdirSync(join(home, 'logs'))) expect(readFileSync(join(home, 'logs', file), 'utf8')).not.toContain(MODEL_KEY);
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
