/**
 * Per-turn overhead of the platform and of the egress proxy, interleaved in one run against the
 * same scripted model, each conversation growing the same way (every turn resumes the previous):
 *   1. a Claude Code turn through the gateway on the default network (official SDK → kernel →
 *      sandbox-manager → `exec` in the session's container → model requests through the relay and
 *      the egress → outputs back as commands → the `session.status_idle` event);
 *   2. the same CLI by hand with `docker exec` in that container, its model requests through the
 *      relay and the egress too (what the platform adds on top of the harness: target ≤ 5 %).
 * Then single model requests (curl, a new connection each, as the least favourable case for the
 * relay) from inside that sandbox through the relay and the egress, beside the same curl run on
 * this machine straight to the model (the raw operation; no sandbox gets the host network), in
 * interleaved batches: what the egress adds to each model request of a turn.
 *
 *   node -r @swc-node/register bench/turn-overhead.ts [turns]
 *
 * Starts nats-server, the five services and Berth's Docker engine as the end-to-end tests do,
 * and removes everything it started.
 */
import Anthropic from '@anthropic-ai/sdk';
import { spawn } from 'node:child_process';
import { testAgentConfig } from '@berth/contracts/testing';
import { harnessAdapterFor } from '@berth/harness';
import { EGRESS_RELAY_PORT, relayUrl, SANDBOX_HOME, SANDBOX_WORKDIR } from '@berth/sandbox-domain';
import { AnthropicMessagesServer, reply } from '@berth/testing';
// The bench drives the whole platform exactly as the sandbox-manager's end-to-end tests start it.
import { startE2ePlatform, type E2ePlatform } from '../apps/sandbox-manager/src/testing/e2e-platform';

const TURNS = Number(process.argv[2] ?? 10);
const PLACEHOLDER = 'berth-egress-adds-the-real-key';
const REQUEST_BATCHES = 10;
const REQUESTS_PER_BATCH = 20;
/** The agent the bench's direct harness runs: the platform's agent has the same model and the built-in toolset. */
const BENCH_AGENT = testAgentConfig({ model: 'claude-sonnet-4-5', tools: [{ type: 'agent_toolset_20260401' }] });
const adapter = harnessAdapterFor('claude-code');

const percentile = (values: readonly number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

/** One turn through the gateway: from sending the message to seeing the turn's idle event on the stream. */
async function platformTurn(client: Anthropic, sessionId: string, text: string): Promise<number> {
  const stream = await client.beta.sessions.events.stream(sessionId);
  const start = performance.now();
  await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
  for await (const event of stream) {
    if (event.type === 'session.status_idle') break;
  }
  return performance.now() - start;
}

/**
 * The same CLI, same flags, same model, by hand: `exec` into the container, feed the prompt, until
 * the CLI prints its `result` line (the turn is done; the platform's idle event marks the same moment).
 */
async function rawTurn(platform: E2ePlatform, container: string, baseUrl: string, key: string, text: string, resumeId: string | null): Promise<{ ms: number; sessionId: string | null }> {
  const plan = adapter.buildTurn({ prompt: text, resumeId, model: { baseUrl, apiKeyEnv: 'BERTH_MODEL_API_KEY' }, agent: BENCH_AGENT, cwd: SANDBOX_WORKDIR, home: SANDBOX_HOME });
  const start = performance.now();
  const exec = await platform.runtime.exec(container, { cmd: plan.argv, env: { ...plan.env, ANTHROPIC_API_KEY: key }, workdir: SANDBOX_WORKDIR });
  for (const line of plan.stdinLines) exec.write(`${line}\n`);
  let state = adapter.initialState('always_allow');
  let sessionId: string | null = null;
  let ms = Number.NaN;
  for await (const line of exec.lines) {
    const step = adapter.parseLine(line, state);
    state = step.state;
    sessionId = step.harnessSessionId ?? sessionId;
    if (step.terminal) {
      ms = performance.now() - start;
      exec.closeStdin();
    }
  }
  await exec.exit;
  return { ms, sessionId };
}

/** The shell loop of `count` non-streaming model requests with curl, printing each one's total time in seconds. */
function curlLoop(url: string, count: number): string {
  const body = JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
  return `for i in $(seq ${count}); do curl -s -o /dev/null -w '%{time_total}\\n' -X POST -H 'content-type: application/json' -H "x-api-key: $KEY" --data '${body}' ${url}/v1/messages; done`;
}

const millis = (lines: readonly string[]): number[] => lines.filter((l) => l.trim() !== '').map((l) => Number(l) * 1000);

/** The requests from inside `container`, through whatever its network gives it. */
async function curlInSandbox(platform: E2ePlatform, container: string, url: string, key: string, count: number): Promise<number[]> {
  const exec = await platform.runtime.exec(container, { cmd: ['/bin/bash', '-c', curlLoop(url, count)], env: { KEY: key, NO_PROXY: '*' }, stdin: '' });
  const lines: string[] = [];
  for await (const line of exec.lines) lines.push(line);
  await exec.exit;
  return millis(lines);
}

/** The same requests run on this machine, straight to the model. */
async function curlOnHost(url: string, key: string, count: number): Promise<number[]> {
  const child = spawn('/bin/bash', ['-c', curlLoop(url, count)], { env: { PATH: process.env['PATH'], KEY: key }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  await new Promise((resolve) => child.on('close', resolve));
  return millis(out.split('\n'));
}

async function main(): Promise<void> {
  const model = await new AnthropicMessagesServer().start();
  model.setDefaultReply(reply.text('Done.'));
  const platform = await startE2ePlatform({ modelBaseUrl: model.url });
  try {
    const client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
    const agent = await client.beta.agents.create({ name: 'bench', model: 'claude-sonnet-4-5' });
    // An environment with no network settings: the default, the egress.
    const env = await client.beta.environments.create({ name: 'bench', config: { type: 'cloud', harness: 'claude-code' } as Anthropic.Beta.Environments.BetaCloudConfigParams });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const container = `berth-s-${session.id}-g1`;
    const relay = relayUrl(EGRESS_RELAY_PORT);

    // Warm-up: the first turn of each also waits for the sandbox and fills the CLI's caches.
    await platformTurn(client, session.id, 'warm up');
    let viaEgress = await rawTurn(platform, container, relay, PLACEHOLDER, 'warm up', null);

    const platformMs: number[] = [];
    const egressMs: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      platformMs.push(await platformTurn(client, session.id, `turn ${i}`));
      viaEgress = await rawTurn(platform, container, relay, PLACEHOLDER, `turn ${i}`, viaEgress.sessionId);
      egressMs.push(viaEgress.ms);
    }

    const row = (name: string, values: number[], digits = 0) =>
      console.log(`${name.padEnd(52)} p50 ${percentile(values, 50).toFixed(digits).padStart(6)} ms   p99 ${percentile(values, 99).toFixed(digits).padStart(6)} ms`);
    const ratio = (a: number[], b: number[]) => ((percentile(a, 50) / percentile(b, 50) - 1) * 100).toFixed(1);
    console.log(`Claude Code turn latency, ${TURNS} turns each, interleaved, same image and scripted model:`);
    row('platform, default network (gateway → idle event)', platformMs);
    row('docker exec of the same CLI, through the egress', egressMs);
    console.log(`platform overhead at p50 (platform / exec through the egress): ${ratio(platformMs, egressMs)} % (target ≤ 5 %)`);

    const viaRelay: number[] = [];
    const straightToModel: number[] = [];
    for (let b = 0; b < REQUEST_BATCHES; b++) {
      viaRelay.push(...(await curlInSandbox(platform, container, relay, PLACEHOLDER, REQUESTS_PER_BATCH)));
      straightToModel.push(...(await curlOnHost(model.url, 'sk-scripted-not-a-real-key', REQUESTS_PER_BATCH)));
    }
    console.log(`\nOne model request (curl, new connection each), ${viaRelay.length} each, interleaved batches of ${REQUESTS_PER_BATCH}:`);
    row('through the relay and the egress (key added there)', viaRelay, 1);
    row('the same curl on this machine, straight to the model', straightToModel, 1);
    console.log(`egress cost per request at p50: ${(percentile(viaRelay, 50) - percentile(straightToModel, 50)).toFixed(1)} ms`);
  } finally {
    await platform.stop();
    await model.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
