import Anthropic from '@anthropic-ai/sdk';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DockerSandboxRuntime } from '@berth/docker';
import { AnthropicMessagesServer, ensureDockerTestEngine, freePort, reply, ScriptedUpstreamProxy } from '@berth/testing';

/**
 * The README's run path, as a new user takes it: `npm start` (scripts/run.sh) with a model server
 * on host loopback, then the official SDK creates an agent, an environment with no network
 * settings and a session, and runs a turn. The model server must see the request with the real
 * key, which only the egress had. (The harness image is the one this run built, not `latest`, and
 * the egress's way to other hosts is a scripted proxy on loopback: nothing leaves this machine.)
 */
const KEY = 'sk-run-sh-real-key-for-the-model';
const REPO = join(__dirname, '..');

jest.setTimeout(900_000);

describe('npm start', () => {
  let model: AnthropicMessagesServer;
  let upstream: ScriptedUpstreamProxy;
  let run: ChildProcess | null = null;
  let output = '';
  const home = mkdtempSync('/tmp/berth-run-');
  const scope = `runsh${process.pid}`;
  let dockerHost = '';

  beforeAll(async () => {
    const engine = ensureDockerTestEngine({ harness: true });
    dockerHost = engine.dockerHost;
    model = await new AnthropicMessagesServer().start();
    upstream = await new ScriptedUpstreamProxy().start();
    const port = await freePort();
    run = spawn('bash', ['scripts/run.sh'], {
      cwd: REPO,
      env: {
        ...process.env,
        BERTH_HOME: home,
        PORT: String(port),
        BERTH_MODEL_BASE_URL: model.url,
        BERTH_MODEL_API_KEY: KEY,
        BERTH_SANDBOX_SCOPE: scope,
        BERTH_SANDBOX_IMAGE: engine.harnessImage as string,
        BERTH_EGRESS_UPSTREAM_PROXY: upstream.url,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    run.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    run.stderr?.on('data', (c: Buffer) => (output += c.toString()));
  });

  afterAll(async () => {
    if (run !== null && run.exitCode === null) {
      const exited = new Promise((resolve) => run?.once('exit', resolve));
      run.kill('SIGINT');
      await exited;
    }
    // run.sh leaves sandboxes for the next start to adopt; this run's are removed here.
    const runtime = new DockerSandboxRuntime({ dockerHost, managedLabels: { 'berth.scope': scope }, egressRoot: join(home, 'egress') });
    for (const c of await runtime.list({ 'berth.scope': scope })) await runtime.remove(c.id);
    await model?.close();
    await upstream?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('runs a turn for an environment created with no network settings, the model seeing the real key', async () => {
    const started = Date.now();
    while (!/API key:\s+(bk_\S+)/.test(output)) {
      if (run?.exitCode !== null) throw new Error(`run.sh exited (${run?.exitCode}):\n${output}`);
      if (Date.now() - started > 600_000) throw new Error(`run.sh did not print an API key:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const apiUrl = /API:\s+(http:\/\/\S+)\/v1/.exec(output)?.[1] as string;
    const apiKey = /API key:\s+(bk_\S+)/.exec(output)?.[1] as string;
    const client = new Anthropic({ apiKey, baseURL: apiUrl, maxRetries: 0 });

    model.script(reply.text('Hello from the model behind the egress.'));
    const agent = await client.beta.agents.create({ name: 'first', model: 'claude-sonnet-4-5' });
    const env = await client.beta.environments.create({ name: 'first' });
    expect(env.config).toMatchObject({ network: 'egress', networking: { type: 'unrestricted' } });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Say hello' }] }] });

    const deadline = Date.now() + 180_000;
    let events: { type: string; [k: string]: unknown }[] = [];
    while (!events.some((e) => e.type === 'session.status_idle')) {
      if (Date.now() > deadline) throw new Error(`the turn did not end:\n${JSON.stringify(events)}\n${output}`);
      await new Promise((r) => setTimeout(r, 250));
      events = [];
      for await (const e of client.beta.sessions.events.list(session.id)) events.push(e as unknown as { type: string });
    }
    const messages = events.filter((e) => e.type === 'agent.message').map((e) => JSON.stringify(e['content']));
    expect(messages.join('')).toContain('Hello from the model behind the egress.');
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect(model.modelRequests.length).toBeGreaterThan(0);
    expect(model.sawCredential(KEY)).toBe(true);
  });
});
