import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, parsePrometheusText, reply, sumOf } from '@berth/testing';
import { createStore } from '@berth/store';
import type { BerthStore } from '@berth/ports';
import { e2eEnvironmentConfig, startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import type { ServiceProcess } from '../testing/service-process';
import { listEvents } from '../testing/session-events';

const SESSIONS = 20;
const POOL = 6;

/**
 * Two sandbox-manager processes on one engine, one store and one broker, sharing one warm pool
 * (docs/scale-out.md "Replicas"): 20 sessions created at once are each bound exactly once, to a
 * container of their own, and no warm container is handed out twice. The shared durable consumer
 * splits the sessions' sandbox requests between the managers as it pleases (JetStream promises no
 * balance; on a busy machine one manager may take them all), and each looks up the other's warm
 * containers, so the store's claims decide; the racing claimants are pinned by the store contract.
 * Then the manager that bound a sandbox is killed, and the other one expires and releases it when
 * it idles, without a restart.
 */
describe('two sandbox-managers sharing one warm pool', () => {
  let model: AnthropicMessagesServer;
  let platform: E2ePlatform;
  let client: Anthropic;
  let store: BerthStore;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    model.setDefaultReply(reply.text('Bound and ready.'));
    platform = await startE2ePlatform({ modelBaseUrl: model.url, managers: 2, managerEnv: { BERTH_POOL_SWEEP_MS: '500', BERTH_LEASE_SWEEP_MS: '500' } });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
    store = createStore(`sqlite:${platform.storePath}`);
    await store.init();
  }, 600_000);
  afterAll(async () => {
    await store?.close();
    await platform?.stop();
    await model?.close();
  }, 180_000);

  it(`binds ${SESSIONS} sessions created at once exactly once each, never one warm sandbox to two sessions`, async () => {
    const env = await client.beta.environments.create({ name: 'shared-pool', config: e2eEnvironmentConfig({ harness: 'claude-code', warm_pool_size: POOL }) });
    const agent = await client.beta.agents.create({
      name: 'replica-tester',
      model: 'claude-opus-4-7',
      system: 'You answer in one short sentence.',
      tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'web_fetch', enabled: false }] }],
    });
    const unclaimed = async () => (await platform.runtime.list({ 'berth.pool': env.id })).filter((c) => c.running && c.name.replace(/^\//, '').startsWith('berth-p-'));
    // A first session makes a manager configure the pool; then the pool fills.
    const first = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    await waitFor(`${first.id} bound`, async () => (await store.journal.readEvents(first.id, { types: ['SandboxBound'] })).length > 0, 180_000, platform.logs);
    await waitFor(`${POOL} warm sandboxes`, async () => (await unclaimed()).length >= POOL, 300_000, platform.logs);

    const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => client.beta.sessions.create({ agent: agent.id, environment_id: env.id })));
    const ids = sessions.map((s) => s.id);
    const binds = async (id: string) => store.journal.readEvents(id, { types: ['SandboxBound', 'SandboxStartFailed'] });
    await waitFor(`all ${SESSIONS} sessions bound`, async () => (await Promise.all(ids.map(binds))).every((e) => e.length > 0), 300_000, platform.logs);

    const bound = await Promise.all(
      ids.map(async (id) => {
        const events = await binds(id);
        expect(events.map((e) => e.type)).toEqual(['SandboxBound']);
        const data = events[0]!.data as { sandbox_id: string; generation: number; warm: boolean };
        expect(data).toMatchObject({ sandbox_id: `berth-s-${id}-g1`, generation: 1 });
        const container = await platform.runtime.inspect(data.sandbox_id);
        expect(container?.running).toBe(true);
        return { id, warm: data.warm, containerId: container!.id, workspace: container!.labels['berth.workspace'] };
      }),
    );
    // One container per session, one workspace per container: nothing handed out twice.
    expect(new Set(bound.map((b) => b.containerId)).size).toBe(SESSIONS);
    expect(new Set(bound.map((b) => b.workspace)).size).toBe(SESSIONS);
    const warm = bound.filter((b) => b.warm);
    expect(warm.length).toBeGreaterThanOrEqual(1);
    for (const b of warm) expect(await store.sandboxClaims.claimant(b.containerId)).toBe(b.id);

    // How the shared consumer split the burst, for the reader: JetStream does not promise balance.
    const claimsOf = async (url: string) => sumOf(parsePrometheusText(await (await fetch(url)).text()), 'berth_warm_pool_claims_total');
    const perManager = await Promise.all(platform.managerMetricsUrls.map(claimsOf));
    console.log(`two managers, ${SESSIONS} sessions at once, pool of ${POOL}: ${warm.length} served warm, ${SESSIONS - warm.length} cold; acquisitions per manager ${perManager.join(' / ')}`);

    // And the sandboxes work: a turn in a warm one completes, with the agent's model and system prompt.
    const target = warm[0]!.id;
    const requests = model.modelRequests.length;
    await client.beta.sessions.events.send(target, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Are you there?' }] }] });
    const events = await waitFor(
      'the turn completed',
      async () => {
        const all = await listEvents(client, target);
        return all.at(-1)?.type === 'session.status_idle' && all.some((e) => e.type === 'agent.message') ? all : null;
      },
      180_000,
      platform.logs,
    );
    expect(events.at(-1)).toMatchObject({ stop_reason: { type: 'end_turn' } });
    expect(JSON.stringify(events.filter((e) => e.type === 'agent.message'))).toContain('Bound and ready.');
    const request = model.modelRequests.slice(requests).find((r) => JSON.stringify(r.body).includes('Are you there?'))?.body as { model?: string } | undefined;
    expect(request?.model).toBe('claude-opus-4-7');
    expect(JSON.stringify(request)).toContain('You answer in one short sentence.');
  }, 900_000);

  it('the other manager expires and releases an idle sandbox whose manager was killed, with no restart', async () => {
    const env = await client.beta.environments.create({ name: 'short-lease', config: e2eEnvironmentConfig({ harness: 'claude-code', idle_timeout_seconds: 10 }) });
    const agent = await client.beta.agents.create({ name: 'lease-tester', model: 'claude-opus-4-7', system: 'You answer in one short sentence.' });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const bound = await waitFor(`${session.id} bound`, async () => (await store.journal.readEvents(session.id, { types: ['SandboxBound'] }))[0], 180_000, platform.logs);
    const sandboxId = (bound.data as { sandbox_id: string }).sandbox_id;
    // The manager that bound it, by its log; the other one never did.
    const saysBound = (m: ServiceProcess) => m.output().split('\n').some((line) => line.includes('sandbox bound: its lease is swept here') && line.includes(session.id));
    const [binder, other] = await waitFor(
      'the binding manager',
      async () => {
        const [first, second] = platform.managers() as [ServiceProcess, ServiceProcess];
        return saysBound(first) ? [first, second] : saysBound(second) ? [second, first] : null;
      },
      30_000,
      platform.logs,
    );
    await binder.kill();

    const lost = await waitFor('the lease to run out', async () => (await store.journal.readEvents(session.id, { types: ['SandboxLost'] }))[0], 120_000, platform.logs);
    expect(lost.data).toMatchObject({ sandbox_id: sandboxId, generation: 1, cause: 'expired' });
    // Not early: the idle timeout counts from the session's last activity, which no manager alive recorded.
    expect(Date.parse(lost.occurred_at)).toBeGreaterThanOrEqual(Date.parse(bound.occurred_at) + 10_000);
    await waitFor('the sandbox removed', async () => (await platform.runtime.inspect(sandboxId)) === null, 60_000, platform.logs);
    expect(other.ended()).toBe(false);
    expect(other.output().split('\n').some((line) => line.includes('lease sweep: tracking a sandbox bound by another manager') && line.includes(session.id))).toBe(true);
  }, 300_000);
});
