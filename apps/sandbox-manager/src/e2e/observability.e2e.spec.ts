import Anthropic from '@anthropic-ai/sdk';
import { Consumers } from '@berth/contracts';
import { AnthropicMessagesServer, OtlpTraceReceiver, parsePrometheusText, reply, sumOf, type Sample } from '@berth/testing';
import { startE2ePlatform, waitFor, type E2ePlatform } from '../testing/e2e-platform';
import { listEvents } from '../testing/session-events';

/**
 * What an operator sees of one turn, with the platform run as processes (nats-server, kernel,
 * sandbox-manager, gateway, a real sandbox) on the default environment network: every service's
 * /metrics before and after the turn, the turn's log lines, and the trace of the message the
 * official SDK sent, exported over OTLP/HTTP to a collector the test runs on loopback.
 *
 * The turn is interrupted once the manager reports it running: on today's default network the
 * harness cannot reach the scripted model (that is the egress proxy's job) and would retry for
 * minutes; interrupted or not, the turn's figures, spans and lines are the same.
 */
jest.setTimeout(240_000);

type Service = keyof E2ePlatform['metricsUrls'];

let model: AnthropicMessagesServer;
let collector: OtlpTraceReceiver;
let platform: E2ePlatform;
let client: Anthropic;

beforeAll(async () => {
  model = await new AnthropicMessagesServer().start();
  model.script(reply.text('observed'));
  collector = await new OtlpTraceReceiver().start();
  platform = await startE2ePlatform({
    modelBaseUrl: model.url,
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '100' },
  });
  client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
}, 600_000);

afterAll(async () => {
  await platform?.stop();
  await collector?.close();
  await model?.close();
}, 60_000);

async function scrape(): Promise<Record<Service, Sample[]>> {
  const entries = await Promise.all(
    (Object.entries(platform.metricsUrls) as [Service, string][]).map(async ([service, url]) => {
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/plain');
      return [service, parsePrometheusText(await res.text())] as const;
    }),
  );
  return Object.fromEntries(entries) as Record<Service, Sample[]>;
}

const events = (sessionId: string) => listEvents(client, sessionId);

describe('an operator watching one turn', () => {
  let sessionId = '';
  let before: Record<Service, Sample[]>;
  let during: Record<Service, Sample[]> | null = null;
  let after: Record<Service, Sample[]>;

  beforeAll(async () => {
    const agent = await client.beta.agents.create({ name: 'observed', model: 'claude-sonnet-4-5', system: 'You answer in one word.' });
    const env = await client.beta.environments.create({ name: 'observed', config: { type: 'cloud', harness: 'claude-code' } as Anthropic.Beta.Environments.BetaCloudConfigParams });
    sessionId = (await client.beta.sessions.create({ agent: agent.id, environment_id: env.id })).id;
    before = await scrape();
    await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'Say one word.' }] }] });
    const settled = async () => (await events(sessionId)).some((e) => e.type === 'session.status_idle');
    await waitFor(
      'the turn to run or settle',
      async () => {
        const now = await scrape();
        if (sumOf(now['sandbox-manager'], 'berth_turns_running') === 1) return (during = now);
        return settled();
      },
      120_000,
      platform.logs,
    );
    if (during !== null) await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.interrupt' }] });
    await waitFor('the turn to settle', settled, 60_000, platform.logs);
    // The turn's duration is recorded once the harness process is done (exit and last transcript
    // mirror), which may come after the session is idle again.
    const durations = (now: Record<Service, Sample[]>) => sumOf(now['sandbox-manager'], 'berth_turn_duration_seconds_count', { harness: 'claude-code' });
    after = await waitFor(
      "the turn's duration to be recorded",
      async () => {
        const now = await scrape();
        return durations(now) > durations(before) ? now : null;
      },
      60_000,
      platform.logs,
    );
  });

  it('sees every figure of the turn move on /metrics', () => {
    const moved = (service: Service, name: string, labels: Record<string, string> = {}) => sumOf(after[service], name, labels) - sumOf(before[service], name, labels);
    // The message, and the interrupt when the turn was still running.
    expect(moved('gateway', 'berth_http_request_duration_seconds_count', { method: 'POST', route: '/v1/sessions/{session_id}/events', status: '200' })).toBe(during ? 2 : 1);
    expect(moved('session-kernel', 'berth_commands_handled_total', { type: 'SubmitUserMessage', outcome: 'applied' })).toBe(1);
    expect(moved('session-kernel', 'berth_events_published_total', { type: 'TurnStarted' })).toBe(1);
    expect(moved('session-kernel', 'berth_kernel_commit_duration_seconds_count')).toBeGreaterThanOrEqual(2);
    expect(moved('session-kernel', 'berth_kernel_decide_duration_seconds_count')).toBeGreaterThanOrEqual(2);
    expect(moved('session-kernel', 'berth_consumer_deliveries_total', { consumer: 'session-kernel' })).toBeGreaterThanOrEqual(2);
    expect(moved('sandbox-manager', 'berth_consumer_results_total', { consumer: 'sandbox-manager', result: 'ack' })).toBeGreaterThanOrEqual(1);
    expect(moved('sandbox-manager', 'berth_turn_duration_seconds_count', { harness: 'claude-code' })).toBe(1);
    if (during !== null) {
      expect(sumOf(during['sandbox-manager'], 'berth_sandboxes', { state: 'bound' })).toBe(1);
      expect(sumOf(during['gateway'], 'berth_http_request_duration_seconds_count', { route: '/v1/sessions/{session_id}/events', method: 'POST' })).toBe(1);
    }
    expect(sumOf(after['sandbox-manager'], 'berth_turns_running')).toBe(0);
    expect(sumOf(after['sandbox-manager'], 'berth_sandboxes', { state: 'bound' })).toBe(1);
    // Read from the broker at scrape time: a settled platform has nothing waiting.
    expect(sumOf(after['session-kernel'], 'berth_consumer_pending', { consumer: 'session-kernel', kind: 'pending' })).toBe(0);
  });

  it("follows the message in one trace from the gateway's HTTP span through the kernel to the sandbox-manager's turn", async () => {
    const post = await waitFor(
      'the gateway span of the POST',
      async () => collector.spans.find((s) => s.service === 'gateway' && s.name === 'POST /v1/sessions/{session_id}/events' && s.attributes['http.response.status_code'] === 200),
      30_000,
    );
    // Each service exports its spans in its own batches, and the turns consumer's TurnStarted span
    // ends only after the turn span it holds: wait for every span the chain needs.
    const chain = await waitFor(
      'the publish, the kernel, the TurnStarted delivery and the turn in that trace',
      async () => {
        const trace = collector.trace(post.traceId);
        const named = (service: string, name: string) => trace.find((s) => s.service === service && s.name === name);
        // The control consumer also receives TurnStarted (one filter subject for all events) and skips it; the turns consumer runs the turn.
        const turnStarted = trace.find(
          (s) => s.service === 'sandbox-manager' && s.name === 'SESSION_EVT process TurnStarted' && s.attributes['messaging.consumer.group.name'] === Consumers.sandboxManagerTurns,
        );
        const found = {
          publish: named('gateway', 'publish SubmitUserMessage'),
          handled: named('session-kernel', 'SESSION_CMD process SubmitUserMessage'),
          turnStarted,
          turnStartedPublish: trace.find((s) => turnStarted !== undefined && s.spanId === turnStarted.parentSpanId),
          turn: named('sandbox-manager', 'turn'),
        };
        return Object.values(found).every(Boolean) ? found : null;
      },
      30_000,
    );
    const { publish, handled, turnStarted, turnStartedPublish, turn } = chain;
    // The chain of parents: HTTP request → publish → kernel → (its publish of TurnStarted) → manager → turn.
    expect(publish?.parentSpanId).toBe(post.spanId);
    expect(handled?.parentSpanId).toBe(publish?.spanId);
    expect(turnStartedPublish).toMatchObject({ service: 'session-kernel', name: 'publish TurnStarted' });
    expect(turn?.parentSpanId).toBe(turnStarted?.spanId);
    expect(turn?.attributes['berth.session_id']).toBe(sessionId);
  });

  it("writes the turn's log lines as JSON with its session, and no secret anywhere", () => {
    const manager = platform.manager().output().split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
    const turnLines = manager.filter((l) => typeof l.turn_id === 'string');
    expect(turnLines.map((l) => l.msg)).toEqual(expect.arrayContaining(['turn started', 'turn settled']));
    for (const line of turnLines) expect(line).toMatchObject({ service: 'sandbox-manager', session_id: sessionId });
    const all = platform.logs();
    for (const secret of platform.secrets) expect(all).not.toContain(secret);
  });
});
