import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, canMakeAptRepository, reply, TestAptRepository, TestNpmRegistry } from '@berth/testing';
import { e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents } from '../testing/session-events';

/**
 * Environment fields take effect where they act, through the gateway with the official SDK:
 * `packages` are in the sandbox (built into the environment's image once, reused by the next
 * session; installed through the egress from the operator's mirrors, here a registry and a signed
 * apt repository the test made on loopback under public-looking names), a failed install and a
 * package source the build's policy refuses are errors on the session, `resources` are the container's limits,
 * `idle_timeout_seconds` is the lease (`expires_at`, restarted by each turn) and the sandbox is released when it passes,
 * `warm_pool_size` keeps a started sandbox ready for the next session.
 */
type SessionView = { berth: { sandbox: { sandbox_id: string; generation: number; expires_at: string | null } | null; runtime_unavailable?: boolean } };

describe('environment config through the platform (claude-code)', () => {
  let model: AnthropicMessagesServer;
  let platform: E2ePlatform;
  let client: Anthropic;
  let agentId: string;
  const run = randomBytes(4).toString('hex');
  const npmPackage = { name: `berth-cowsay-${run}`, version: '1.0.0', bin: `berth-cowsay-${run}`, prints: 'moo from the test registry' };
  const aptPackage = { name: `berth-jq-${run}`, version: '1.0', prints: 'jq from the test repository' };
  // A loopback listener nothing may reach, and packages whose metadata send the build elsewhere.
  let forbidden: Server;
  let forbiddenConnections = 0;
  const withApt = canMakeAptRepository();
  let npm: TestNpmRegistry;
  let apt: TestAptRepository | null = null;
  const keyDir = mkdtempSync(join(tmpdir(), 'berth-e2e-aptkey-'));

  beforeAll(async () => {
    forbidden = createServer((socket) => {
      forbiddenConnections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => forbidden.listen(0, '127.0.0.1', () => resolve()));
    const forbiddenPort = (forbidden.address() as AddressInfo).port;
    npm = await new TestNpmRegistry('http://registry.npm.test', [
      npmPackage,
      { name: `berth-elsewhere-${run}`, version: '1.0.0', bin: 'x', prints: 'x', tarballAt: `http://downloads.evil.test/berth-elsewhere-${run}.tgz` },
      { name: `berth-loopback-${run}`, version: '1.0.0', bin: 'y', prints: 'y', tarballAt: `http://[::ffff:127.0.0.1]:${forbiddenPort}/berth-loopback-${run}.tgz` },
    ]).start();
    const managerEnv: Record<string, string> = { BERTH_LEASE_SWEEP_MS: '500', BERTH_NPM_REGISTRY: 'http://registry.npm.test/' };
    if (withApt) {
      apt = await new TestAptRepository([aptPackage]).start();
      writeFileSync(join(keyDir, 'mirror.gpg'), apt.key);
      Object.assign(managerEnv, { BERTH_APT_MIRROR: 'http://apt.mirror.test/', BERTH_APT_MIRROR_KEY: join(keyDir, 'mirror.gpg') });
    }
    model = await new AnthropicMessagesServer().start();
    model.setDefaultReply(reply.text('ok'));
    platform = await startE2ePlatform({
      modelBaseUrl: model.url,
      managerEnv,
      upstreamHosts: { 'registry.npm.test': { origin: npm.files.origin }, ...(apt === null ? {} : { 'apt.mirror.test': { origin: apt.files.origin } }), 'downloads.evil.test': { body: 'never served' } },
    });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
    agentId = (await client.beta.agents.create({ name: 'env-tester', model: 'claude-opus-4-7', tools: [{ type: 'agent_toolset_20260401' }] })).id;
  }, 600_000);
  afterAll(async () => {
    await platform?.stop();
    await Promise.all([model?.close(), npm?.close(), apt?.close(), new Promise((resolve) => forbidden?.close(resolve))]);
    rmSync(keyDir, { recursive: true, force: true });
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

  it('installs packages.apt and packages.npm into the environment\'s image once, from the mirrors through the egress: the second session starts from it without installing again', async () => {
    if (!withApt) console.log('dpkg-deb, dpkg-scanpackages or gpg is missing: only packages.npm is exercised');
    const packages = { apt: withApt ? [aptPackage.name] : [], npm: [npmPackage.name] };
    const env = await client.beta.environments.create({ name: 'packages', config: e2eEnvironmentConfig({ harness: 'claude-code', packages }) });

    // The environment's image is removed at the end even when an assertion fails: a leftover image
    // would make the next run's first session reuse it instead of building.
    let built: string | null = null;
    try {
      const firstStart = Date.now();
      const first = await client.beta.sessions.create({ agent: agentId, environment_id: env.id });
      const firstBox = await boundSandbox(first.id, 600_000);
      built = (await platform.runtime.docker.getContainer(firstBox.sandbox_id).inspect()).Config.Image;
      const firstSeconds = (Date.now() - firstStart) / 1000;
      if (withApt) expect((await inSandbox(firstBox.sandbox_id, [aptPackage.name])).out).toBe(aptPackage.prints);
      expect(await inSandbox(firstBox.sandbox_id, [npmPackage.bin])).toMatchObject({ exit: 0, out: npmPackage.prints });
      // Installed through the egress: the upstream (the test's "internet") saw the mirrors' names, and nothing else was asked for.
      expect(new Set(platform.upstream.requests.map((r) => r.host))).toEqual(new Set(['registry.npm.test', ...(withApt ? ['apt.mirror.test'] : [])]));

      const secondStart = Date.now();
      const second = await client.beta.sessions.create({ agent: agentId, environment_id: env.id });
      const secondBox = await boundSandbox(second.id, 60_000);
      const secondSeconds = (Date.now() - secondStart) / 1000;
      console.log(`environment packages (${withApt ? 'apt 1, ' : ''}npm 1, from loopback mirrors through the egress): first session bound after ${firstSeconds.toFixed(1)} s (image built), second after ${secondSeconds.toFixed(2)} s (image reused)`);

      expect(await inSandbox(secondBox.sandbox_id, [npmPackage.bin])).toMatchObject({ exit: 0, out: npmPackage.prints });
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

  /** Sends a message to a new session of `packages` and returns the session error of its failed start. */
  const failedStart = async (name: string, packages: Record<string, string[]>) => {
    const env = await client.beta.environments.create({ name, config: e2eEnvironmentConfig({ harness: 'claude-code', packages }) });
    const session = await client.beta.sessions.create({
      agent: agentId,
      environment_id: env.id,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello' }] }],
    });
    const all = await waitFor('the failed turn', async () => {
      const e = await events(session.id);
      return e.some((x) => x.type === 'session.status_idle') ? e : null;
    }, 300_000, platform.logs);
    expect(all.find((e) => e.type === 'session.status_idle')).toMatchObject({ berth_failure: { reason: 'sandbox_start_failed' } });
    return JSON.stringify(all.find((e) => e.type === 'session.error'));
  };

  it('reports a package that cannot be installed as an error on the session, and the turn does not hang', async () => {
    const packages: Record<string, string[]> = withApt ? { apt: ['no-such-package-berth-e2e'] } : { npm: ['no-such-package-berth-e2e'] };
    expect(await failedStart('broken', packages)).toContain(withApt ? 'Unable to locate package no-such-package-berth-e2e' : 'no-such-package-berth-e2e');
  }, 600_000);

  it('fails the build with the egress\'s words when a package\'s metadata sends it to a host outside its policy, or to this machine, and neither is reached', async () => {
    const elsewhere = await failedStart('elsewhere', { npm: [`berth-elsewhere-${run}`] });
    expect(elsewhere).toContain('Berth egress refused downloads.evil.test:80: the image build of environment');
    const loopback = await failedStart('loopback', { npm: [`berth-loopback-${run}`] });
    expect(loopback).toMatch(/Berth egress refused \S+:\d+: /);
    // Refused by the build's policy here (its environment allows no such host); the platform rule behind it is in image-builds.int.
    expect(platform.upstream.requests.filter((r) => r.host === 'downloads.evil.test')).toEqual([]);
    expect(forbiddenConnections).toBe(0);
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
