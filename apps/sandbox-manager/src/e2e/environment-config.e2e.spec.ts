import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, reply } from '@berth/testing';
import { e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents } from '../testing/session-events';

/**
 * Environment fields take effect where they act, through the gateway with the official SDK:
 * `packages` are in the sandbox (built into the environment's image once, reused by the next
 * session), a failed install is an error on the session, `resources` are the container's limits,
 * `idle_timeout_seconds` is the lease (`expires_at`, restarted by each turn) and the sandbox is released when it passes,
 * `warm_pool_size` keeps a started sandbox ready for the next session.
 */
type SessionView = { berth: { sandbox: { sandbox_id: string; generation: number; expires_at: string | null } | null; runtime_unavailable?: boolean } };

describe('environment config through the platform (claude-code)', () => {
  let model: AnthropicMessagesServer;
  let platform: E2ePlatform;
  let client: Anthropic;
  let agentId: string;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    model.setDefaultReply(reply.text('ok'));
    platform = await startE2ePlatform({ modelBaseUrl: model.url, managerEnv: { BERTH_LEASE_SWEEP_MS: '500' } });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
    agentId = (await client.beta.agents.create({ name: 'env-tester', model: 'claude-opus-4-7', tools: [{ type: 'agent_toolset_20260401' }] })).id;
  }, 600_000);
  afterAll(async () => {
    await platform?.stop();
    await model?.close();
  }, 120_000);

  const events = (sessionId: string) => listEvents(client, sessionId);
  const view = async (sessionId: string) => (await client.beta.sessions.retrieve(sessionId)) as unknown as SessionView;
  const boundSandbox = (sessionId: string, timeoutMs: number) =>
    waitFor(`a sandbox bound to ${sessionId}`, async () => (await view(sessionId)).berth.sandbox, timeoutMs, platform.logs);
  /** Runs `cmd` in the session's container as the sandbox user and returns its stdout. */
  const inSandbox = async (container: string, cmd: string[]): Promise<{ out: string; exit: number }> => {
    const exec = await platform.runtime.exec(container, { cmd });
    const lines: string[] = [];
    for await (const line of exec.lines) lines.push(line);
    return { out: lines.join('\n'), exit: await exec.exit };
  };

  it('installs packages.apt and packages.npm into the environment\'s image once: the second session starts from it without installing again', async () => {
    const env = await client.beta.environments.create({ name: 'packages', config: e2eEnvironmentConfig({ harness: 'claude-code', packages: { apt: ['jq'], npm: ['cowsay'] } }) });

    // The environment's image is removed at the end even when an assertion fails: a leftover image
    // would make the next run's first session reuse it instead of building.
    let built: string | null = null;
    try {
      const firstStart = Date.now();
      const first = await client.beta.sessions.create({ agent: agentId, environment_id: env.id });
      const firstBox = await boundSandbox(first.id, 600_000);
      built = (await platform.runtime.docker.getContainer(firstBox.sandbox_id).inspect()).Config.Image;
      const firstSeconds = (Date.now() - firstStart) / 1000;
      expect((await inSandbox(firstBox.sandbox_id, ['jq', '--version'])).out).toMatch(/^jq-1\./);
      expect(await inSandbox(firstBox.sandbox_id, ['cowsay', 'ahoy'])).toMatchObject({ exit: 0, out: expect.stringContaining('ahoy') });

      const secondStart = Date.now();
      const second = await client.beta.sessions.create({ agent: agentId, environment_id: env.id });
      const secondBox = await boundSandbox(second.id, 60_000);
      const secondSeconds = (Date.now() - secondStart) / 1000;
      console.log(`environment packages (apt jq, npm cowsay): first session bound after ${firstSeconds.toFixed(1)} s (image built), second after ${secondSeconds.toFixed(2)} s (image reused)`);

      expect((await inSandbox(secondBox.sandbox_id, ['jq', '--version'])).out).toMatch(/^jq-1\./);
      const images = await Promise.all([firstBox, secondBox].map(async (b) => (await platform.runtime.docker.getContainer(b.sandbox_id).inspect()).Config.Image));
      expect(images[0]).toMatch(/^berth\/env:[0-9a-f]{16}$/);
      expect(images[1]).toBe(images[0]);
      const log = platform.manager().output();
      expect(log.match(new RegExp(`environment ${env.id}: sandbox image \\S+ \\([^)]*\\) built in`, 'g'))).toHaveLength(1);
      expect(log).toMatch(new RegExp(`environment ${env.id}: sandbox image \\S+ \\([^)]*\\) reused`));
    } finally {
      if (built !== null) await platform.runtime.docker.getImage(built).remove({ force: true }).catch(() => undefined);
    }
  }, 900_000);

  it('reports a package that cannot be installed as an error on the session, and the turn does not hang', async () => {
    const env = await client.beta.environments.create({ name: 'broken', config: e2eEnvironmentConfig({ harness: 'claude-code', packages: { apt: ['no-such-package-berth-e2e'] } }) });
    const session = await client.beta.sessions.create({
      agent: agentId,
      environment_id: env.id,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }],
    });

    const all = await waitFor('the failed turn', async () => {
      const e = await events(session.id);
      return e.some((x) => x.type === 'session.status_idle') ? e : null;
    }, 300_000, platform.logs);
    const error = all.find((e) => e.type === 'session.error');
    expect(JSON.stringify(error)).toContain('Unable to locate package no-such-package-berth-e2e');
    expect(all.find((e) => e.type === 'session.status_idle')).toMatchObject({ berth_failure: { reason: 'sandbox_start_failed' } });
  }, 600_000);

  it('starts the sandbox with the environment\'s resources as its container limits', async () => {
    const env = await client.beta.environments.create({ name: 'resources', config: e2eEnvironmentConfig({ harness: 'claude-code', resources: { memory_mb: 768, cpus: 1.5, pids: 200 } }) });
    const session = await client.beta.sessions.create({ agent: agentId, environment_id: env.id });
    const box = await boundSandbox(session.id, 120_000);
    const host = (await platform.runtime.docker.getContainer(box.sandbox_id).inspect()).HostConfig;
    expect({ memory: host.Memory, cpus: host.NanoCpus, pids: host.PidsLimit }).toEqual({ memory: 768 * 1024 * 1024, cpus: 1_500_000_000, pids: 200 });
  }, 300_000);

  it('leases the sandbox for the environment\'s idle timeout (expires_at), restarts the lease at the end of a turn, and releases the sandbox when it passes', async () => {
    const env = await client.beta.environments.create({ name: 'short-lease', config: e2eEnvironmentConfig({ harness: 'claude-code', idle_timeout_seconds: 20 }) });
    const before = Date.now();
    const session = await client.beta.sessions.create({ agent: agentId, environment_id: env.id });
    const box = await boundSandbox(session.id, 120_000);
    const boundExpiry = Date.parse(box.expires_at ?? '');
    expect(boundExpiry - before).toBeGreaterThanOrEqual(20_000);
    expect(boundExpiry - Date.now()).toBeLessThanOrEqual(20_000);

    await client.beta.sessions.events.send(session.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }] });
    const idle = await waitFor('the turn to end', async () => (await events(session.id)).find((e) => e.type === 'session.status_idle'), 120_000, platform.logs);
    const renewed = Date.parse((await view(session.id)).berth.sandbox?.expires_at ?? '');
    expect(renewed).toBe(Date.parse(String(idle['processed_at'])) + 20_000);
    expect(renewed).toBeGreaterThan(boundExpiry);

    const lost = await waitFor('the lease to run out', async () => (await events(session.id)).find((e) => e.type === 'berth.sandbox_lost'), 90_000, platform.logs);
    expect(lost).toMatchObject({ cause: 'expired', sandbox_id: box.sandbox_id });
    expect(Date.parse(String(lost['processed_at']))).toBeGreaterThanOrEqual(renewed);
    await waitFor('the sandbox to be removed', async () => (await platform.runtime.inspect(box.sandbox_id)) === null, 15_000, platform.logs);
    expect((await view(session.id)).berth.runtime_unavailable).toBe(true);
  }, 300_000);

  it('keeps warm_pool_size started sandboxes for the environment: the next session is served warm', async () => {
    const env = await client.beta.environments.create({ name: 'warm', config: e2eEnvironmentConfig({ harness: 'claude-code', warm_pool_size: 1 }) });
    await boundSandbox((await client.beta.sessions.create({ agent: agentId, environment_id: env.id })).id, 120_000);
    await waitFor('a warm sandbox for the environment', async () => (await platform.runtime.list({ 'berth.pool': env.id })).some((c) => c.running), 120_000, platform.logs);

    const next = await client.beta.sessions.create({ agent: agentId, environment_id: env.id });
    await boundSandbox(next.id, 60_000);
    const bound = (await events(next.id)).find((e) => e.type === 'berth.sandbox_bound');
    expect(bound).toMatchObject({ warm: true });
  }, 300_000);
});
