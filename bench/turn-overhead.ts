/**
 * Per-turn overhead of the platform: a Claude Code turn sent through the gateway (official SDK →
 * kernel → sandbox-manager → `exec` in the session's container → outputs back as commands → the
 * `session.status_idle` event), beside the same CLI run by hand with `docker exec` in the same
 * container against the same scripted model, interleaved in one run. Both conversations grow the
 * same way (each turn resumes the previous one). Target: overhead ≤ 10 %.
 *
 *   node -r @swc-node/register bench/turn-overhead.ts [turns]
 *
 * Starts nats-server, the three services and Berth's Docker engine as the end-to-end tests do,
 * and removes everything it started.
 */
import Anthropic from '@anthropic-ai/sdk';
import { readAgentConfig, type AgentConfig } from '@berth/contracts';
import { harnessAdapterFor } from '@berth/harness';
import { SANDBOX_HOME, SANDBOX_WORKDIR } from '@berth/sandbox-domain';
import { AnthropicMessagesServer, reply } from '@berth/testing';
// The bench drives the whole platform exactly as the sandbox-manager's end-to-end tests start it.
import { startE2ePlatform, type E2ePlatform } from '../apps/sandbox-manager/src/testing/e2e-platform';

const TURNS = Number(process.argv[2] ?? 10);
const KEY = 'sk-scripted-not-a-real-key';
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
async function rawTurn(platform: E2ePlatform, container: string, agent: AgentConfig, baseUrl: string, text: string, resumeId: string | null): Promise<{ ms: number; sessionId: string | null }> {
  const plan = adapter.buildTurn({ prompt: text, agent, resumeId, model: { baseUrl, apiKeyEnv: 'BERTH_MODEL_API_KEY' }, cwd: SANDBOX_WORKDIR, home: SANDBOX_HOME });
  const start = performance.now();
  const exec = await platform.runtime.exec(container, { cmd: plan.argv, env: { ...plan.env, ANTHROPIC_API_KEY: KEY }, workdir: SANDBOX_WORKDIR });
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

async function main(): Promise<void> {
  const model = await new AnthropicMessagesServer().start();
  model.setDefaultReply(reply.text('Done.'));
  const platform = await startE2ePlatform({ modelBaseUrl: model.url });
  try {
    const client = new Anthropic({ apiKey: platform.apiKey, baseURL: platform.gatewayUrl, maxRetries: 0 });
    const agent = await client.beta.agents.create({ name: 'bench', model: 'claude-sonnet-4-5', tools: [{ type: 'agent_toolset_20260401' }] });
    const agentConfig = readAgentConfig(agent);
    const env = await client.beta.environments.create({
      name: 'bench',
      config: { type: 'cloud', networking: { type: 'unrestricted' }, harness: 'claude-code', network: 'host' } as Anthropic.Beta.Environments.BetaCloudConfigParams,
    });
    const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const container = `berth-s-${session.id}-g1`;

    // Warm-up: the first turn of each also waits for the sandbox and fills the CLI's caches.
    await platformTurn(client, session.id, 'warm up');
    let raw = await rawTurn(platform, container, agentConfig, model.url, 'warm up', null);

    const platformMs: number[] = [];
    const rawMs: number[] = [];
    for (let i = 0; i < TURNS; i++) {
      platformMs.push(await platformTurn(client, session.id, `turn ${i}`));
      raw = await rawTurn(platform, container, agentConfig, model.url, `turn ${i}`, raw.sessionId);
      rawMs.push(raw.ms);
    }

    const row = (name: string, values: number[]) =>
      console.log(`${name.padEnd(34)} p50 ${percentile(values, 50).toFixed(0).padStart(6)} ms   p99 ${percentile(values, 99).toFixed(0).padStart(6)} ms`);
    console.log(`Claude Code turn latency, ${TURNS} turns each, interleaved, same container and scripted model:`);
    row('platform (gateway → idle event)', platformMs);
    row('docker exec of the same CLI', rawMs);
    const overhead = (percentile(platformMs, 50) / percentile(rawMs, 50) - 1) * 100;
    console.log(`overhead at p50: ${overhead.toFixed(1)} % (target ≤ 10 %)`);
  } finally {
    await platform.stop();
    await model.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
