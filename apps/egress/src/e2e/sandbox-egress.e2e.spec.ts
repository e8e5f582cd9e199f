import Anthropic from '@anthropic-ai/sdk';
import { AnthropicMessagesServer, freePort, reply } from '@berth/testing';
// The platform as the sandbox-manager's end-to-end tests start it (processes, real Docker, real Claude Code).
// eslint-disable-next-line @nx/enforce-module-boundaries -- test support shared with the sandbox-manager's e2e specs
import { E2E_MODEL_KEY, startE2ePlatform, waitFor, type E2ePlatform } from '../../../sandbox-manager/src/testing/e2e-platform';
// eslint-disable-next-line @nx/enforce-module-boundaries -- test support shared with the sandbox-manager's e2e specs
import { listEvents, type PublicEvent } from '../../../sandbox-manager/src/testing/session-events';

/**
 * What a sandbox can reach, checked from inside one: each case scripts the real Claude Code CLI to
 * run a Bash command (the way an agent would) and reads what the command printed in the
 * `agent.tool_result` event. Environments are made with no network settings unless the case is
 * about them. Nothing leaves this machine: the egress's only way to "the internet" is a scripted
 * upstream proxy on loopback that serves `allowed.test` and refuses everything else.
 */

const TURN_TIMEOUT_MS = 120_000;

describe('a sandbox on the default network, from inside', () => {
  let model: AnthropicMessagesServer;
  let platform: E2ePlatform;
  let client: Anthropic;

  beforeAll(async () => {
    model = await new AnthropicMessagesServer().start();
    platform = await startE2ePlatform({
      modelBaseUrl: model.url,
      upstreamHosts: { 'allowed.test': { body: 'hello from allowed.test' } },
      // The fail-fast case names its own (closed) endpoint on loopback.
      egressEnv: { BERTH_MODEL_TRUSTED_HOSTS: '127.0.0.1' },
      // Warm sandboxes too: a claimed one is renamed for its session, and the egress must follow.
      managerEnv: { BERTH_WARM_POOL_SIZE: '1' },
    });
    client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
  }, 900_000);
  afterAll(async () => {
    await platform?.stop();
    await model?.close();
  }, 120_000);

  const events = (sessionId: string) => listEvents(client, sessionId);

  const session = async (config: Record<string, unknown> = { type: 'cloud' }, environmentId?: string) => {
    const agent = await client.beta.agents.create({ name: 'prober', model: 'claude-sonnet-4-5', tools: [{ type: 'agent_toolset_20260401' }] });
    const envId = environmentId ?? (await client.beta.environments.create({ name: 'probe', config: config as unknown as Anthropic.Beta.Environments.BetaCloudConfigParams })).id;
    return { session: await client.beta.sessions.create({ agent: agent.id, environment_id: envId }), environmentId: envId };
  };

  /** One turn in which the agent runs `command` with Bash; resolves with what the command printed. */
  const runBash = async (sessionId: string, command: string): Promise<{ output: string; events: PublicEvent[] }> => {
    model.script(reply.toolCall('Bash', { command, description: 'probe the network' }), reply.text('Done probing.'));
    const before = (await events(sessionId)).filter((e) => e.type === 'session.status_idle').length;
    await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Probe the network' }] }] });
    const all = await waitFor(
      'the probing turn to end',
      async () => {
        const e = await events(sessionId);
        return e.filter((x) => x.type === 'session.status_idle').length > before ? e : null;
      },
      TURN_TIMEOUT_MS,
      platform.logs,
    );
    const result = all.filter((e) => e.type === 'agent.tool_result').at(-1);
    const content = (result?.['content'] ?? []) as { type: string; text?: string }[];
    return { output: content.map((c) => c.text ?? '').join('\n'), events: all };
  };

  it(
    "cannot reach the gateway, NATS or the store, directly or through the egress, and sees no model key anywhere",
    async () => {
      const gatewayPort = new URL(platform.gatewayUrl).port;
      const natsPort = new URL(platform.natsUrl).port;
      const { session: s } = await session();
      const { output } = await runBash(
        s.id,
        [
          `for port in ${gatewayPort} ${natsPort}; do if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then echo "OPEN $port"; else echo "CLOSED $port"; fi; done`,
          `curl -sS -m 10 http://127.0.0.1:${gatewayPort}/healthz; echo " direct-exit=$?"`,
          `curl -sS -m 10 --noproxy "" -x "$HTTP_PROXY" http://127.0.0.1:${gatewayPort}/healthz; echo " proxied-exit=$?"`,
          `curl -sS -m 10 -p --noproxy "" -x "$HTTP_PROXY" http://127.0.0.1:${natsPort}/ 2>&1; echo " tunnel-exit=$?"`,
          `test -e ${platform.storePath} && echo STORE-VISIBLE || echo STORE-ABSENT`,
          'echo ENV-BEGIN; env; echo ENV-END',
          'for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < "$f" 2>/dev/null; done | sort -u | grep -i key; echo PROC-END',
          'grep -a -r -h -o -i -E ".{0,40}(api.?key|sk-).{0,40}" "$HOME" 2>/dev/null | sort -u | head -100; echo HOME-END',
        ].join('\n'),
      );
      expect(output).toContain(`CLOSED ${gatewayPort}`);
      expect(output).toContain(`CLOSED ${natsPort}`);
      expect(output).not.toContain('"status"');
      expect(output).toMatch(/direct-exit=[1-9]/);
      expect(output).toContain(`Berth egress refused 127.0.0.1:${gatewayPort} (loopback)`);
      expect(output).toMatch(/tunnel-exit=[1-9]/);
      expect(output).toContain('STORE-ABSENT');
      // The harness ran with its placeholder (so the listing is real), and the key is nowhere.
      expect(output).toContain('ANTHROPIC_API_KEY=berth-egress-adds-the-real-key');
      expect(output).toContain('HOME-END');
      expect(output).not.toContain(E2E_MODEL_KEY);
      // …but the model server got it, from the egress.
      expect(model.sawCredential(E2E_MODEL_KEY)).toBe(true);
      expect(model.sawCredential('berth-egress-adds-the-real-key')).toBe(false);
    },
    TURN_TIMEOUT_MS * 2,
  );

  it(
    'reaches an allowed host and is refused another with a readable error and a berth.egress_denied event (limited networking)',
    async () => {
      const { session: s, environmentId } = await session({ type: 'cloud', networking: { type: 'limited', allowed_hosts: ['allowed.test'] } });
      const { output, events: all } = await runBash(
        s.id,
        [
          'curl -sS -m 10 http://allowed.test/; echo " plain-exit=$?"',
          'curl -sS -m 10 -p http://allowed.test/; echo " tunnelled-exit=$?"',
          'curl -sS -m 10 http://refused.test/; echo " refused-exit=$?"',
          'curl -sS -m 10 https://refused.test/ 2>&1; echo " refused-tls-exit=$?"',
        ].join('\n'),
      );
      expect(output).toContain('hello from allowed.test plain-exit=0');
      expect(output).toContain('hello from allowed.test tunnelled-exit=0');
      expect(output).toContain(`Berth egress refused refused.test:80: environment ${environmentId} has limited networking and "refused.test" is not in config.networking.allowed_hosts`);
      expect(output).toMatch(/CONNECT tunnel failed, response 403[\s\S]*refused-tls-exit=56/);
      const denied = all.filter((e) => e.type === 'berth.egress_denied');
      expect(denied).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ host: 'refused.test', port: 80, reason: 'host_not_allowed', setting: 'config.networking.allowed_hosts' }),
          expect.objectContaining({ host: 'refused.test', port: 443, reason: 'host_not_allowed' }),
        ]),
      );
      expect(platform.upstream.requests.filter((r) => r.host === 'refused.test')).toEqual([]);
    },
    TURN_TIMEOUT_MS * 2,
  );

  it(
    'ends a turn whose model endpoint cannot be reached within 15 s with a session.error naming the endpoint',
    async () => {
      const closed = await freePort();
      const { session: s } = await session({ type: 'cloud', model: { base_url: `http://127.0.0.1:${closed}` } });
      // The sandbox is up before the clock starts: the bound is about the model, not the container.
      await waitFor('the sandbox', async () => (await platform.runtime.inspect(`berth-s-${s.id}-g1`))?.running, 60_000, platform.logs);
      const sentAt = Date.now();
      await client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hello?' }] }] });
      const all = await waitFor('the failed turn', async () => {
        const e = await events(s.id);
        return e.some((x) => x.type === 'session.status_idle') ? e : null;
      }, 60_000, platform.logs);
      expect(Date.now() - sentAt).toBeLessThan(15_000);
      const error = all.find((e) => e.type === 'session.error');
      expect(error).toMatchObject({ error: { type: 'model_request_failed_error', message: expect.stringContaining(`model endpoint http://127.0.0.1:${closed}`) } });
      expect(JSON.stringify(all)).not.toContain('input_not_delivered');
    },
    TURN_TIMEOUT_MS,
  );

  it(
    'serves a warm sandbox claimed for a session as that session',
    async () => {
      const { session: first, environmentId } = await session();
      await runBash(first.id, 'echo first');
      // The first session's sandbox was cold; its environment's pool now holds one warm sandbox.
      await waitFor('a warm sandbox', async () => (await platform.runtime.list({ 'berth.pool': environmentId })).some((c) => c.running && c.name.startsWith('berth-p-')), 60_000, platform.logs);
      const { session: second } = await session({}, environmentId);
      const { output, events: all } = await runBash(second.id, 'curl -sS -m 10 http://allowed.test/; echo " warm-exit=$?"');
      expect(all.find((e) => e.type === 'berth.sandbox_bound')).toMatchObject({ warm: true });
      expect(output).toContain('hello from allowed.test warm-exit=0');
    },
    TURN_TIMEOUT_MS * 2,
  );

  it(
    'keeps its way out when the egress restarts: the socket comes back inside the running sandbox',
    async () => {
      const { session: s } = await session();
      model.script(reply.text('First.'));
      await client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'one' }] }] });
      await waitFor('turn 1', async () => (await events(s.id)).some((e) => e.type === 'session.status_idle'), TURN_TIMEOUT_MS, platform.logs);
      await platform.restartEgress();
      const { output } = await runBash(s.id, 'curl -sS -m 10 http://allowed.test/; echo " after-restart-exit=$?"');
      expect(output).toContain('hello from allowed.test after-restart-exit=0');
    },
    TURN_TIMEOUT_MS * 2,
  );
});
