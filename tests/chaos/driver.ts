import Anthropic from '@anthropic-ai/sdk';
import type { RecordedEvent } from '@berth/contracts';
import type { BerthStore } from '@berth/ports';
import { createStore } from '@berth/store';
import type { AckedCommand } from './invariants';
import { SseRecorder } from './sse-recorder';
import type { Supervisor } from './supervisor';

export type SentMessage = Readonly<{ sessionId: string; eventId: string; turnId: string; sentAt: number }>;
export type TurnEnd = Readonly<{ type: 'TurnCompleted' | 'TurnFailed' | 'TurnRecovered'; reason: string | null; message: string | null; seenAt: number }>;

const TERMINAL = new Set(['TurnCompleted', 'TurnFailed', 'TurnRecovered']);

/**
 * The chaos client: the official Anthropic SDK against the gateway for every write, a raw SSE
 * recorder per session, a record of every acknowledged (2xx) command, and a direct read of the
 * journal for waiting and for the invariants.
 */
export class ChaosDriver {
  readonly client: Anthropic;
  readonly acked: AckedCommand[] = [];
  readonly recorders = new Map<string, SseRecorder>();
  /** One environment per model server: each lane of a scenario talks to its own scripted model. */
  private readonly environments = new Map<string, string>();
  private agentId: string | null = null;

  private constructor(
    private readonly sup: Supervisor,
    readonly store: BerthStore,
    private readonly modelBaseUrl: string,
  ) {
    this.client = new Anthropic({ apiKey: sup.apiKey, baseURL: sup.gatewayUrl, maxRetries: 0, timeout: 20_000 });
  }

  /** `modelBaseUrl`: this driver's environment points its harness at that scripted model server. */
  static async open(sup: Supervisor, modelBaseUrl: string): Promise<ChaosDriver> {
    const store = createStore(sup.storeUrl);
    await store.init();
    return new ChaosDriver(sup, store, modelBaseUrl);
  }

  /**
   * A Claude Code session on the default network (the egress takes the harness to its scripted
   * model on loopback), its stream recorded. `modelBaseUrl`: the scripted model server its
   * environment points at (default: the scenario's).
   */
  async newSession(modelBaseUrl = this.modelBaseUrl): Promise<string> {
    if (this.agentId === null) this.agentId = (await this.client.beta.agents.create({ name: 'chaos-agent', model: 'claude-sonnet-4-5', tools: [{ type: 'agent_toolset_20260401' }] })).id;
    let environmentId = this.environments.get(modelBaseUrl);
    if (environmentId === undefined) {
      const env = await this.client.beta.environments.create({
        name: `chaos-env-${this.environments.size + 1}`,
        config: { type: 'cloud', harness: 'claude-code', model: { base_url: modelBaseUrl } } as Anthropic.Beta.Environments.BetaCloudConfigParams,
      });
      environmentId = env.id;
      this.environments.set(modelBaseUrl, environmentId);
    }
    const session = await this.client.beta.sessions.create({ agent: this.agentId, environment_id: environmentId });
    this.recorders.set(session.id, new SseRecorder(this.sup.gatewayUrl, this.sup.apiKey, session.id).start());
    return session.id;
  }

  /** Sends a user message through the SDK; a 2xx is recorded as acknowledged. */
  async send(sessionId: string, text: string): Promise<SentMessage> {
    const sentAt = Date.now();
    const answer = await this.client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    const echoed = (answer as unknown as { data: { id: string }[] }).data[0];
    return this.acknowledged(sessionId, echoed.id, sentAt);
  }

  /**
   * Sends a user message the way a careful client does while the platform is failing: with an
   * Idempotency-Key, retrying the same request on a 5xx or a dropped connection until it is
   * acknowledged (a 4xx is final). The platform must record it exactly once however many
   * attempts reached it. Null when no attempt was acknowledged within `retryForMs`.
   */
  async sendRetrying(sessionId: string, text: string, retryForMs: number): Promise<(SentMessage & { attempts: number; refusals: string[] }) | null> {
    const sentAt = Date.now();
    const key = `chaos-${sessionId}-${sentAt.toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
    const body = JSON.stringify({ events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
    /** What the failed attempts were answered (status and code, or the connection error), each once. */
    const refusals = new Set<string>();
    for (let attempts = 1; ; attempts++) {
      try {
        const res = await fetch(`${this.sup.gatewayUrl}/v1/sessions/${sessionId}/events`, {
          method: 'POST',
          headers: { 'x-api-key': this.sup.apiKey, 'content-type': 'application/json', 'idempotency-key': key },
          body,
          signal: AbortSignal.timeout(15_000),
        });
        const answer = (await res.json()) as { data?: { id: string }[]; error?: { code?: string; message?: string } };
        if (res.ok && answer.data?.[0]) return { ...(await this.acknowledged(sessionId, answer.data[0].id, sentAt, text)), attempts, refusals: [...refusals] };
        if (res.status < 500) throw new Error(`a retried message was refused ${res.status}: ${answer.error?.code} ${answer.error?.message}`);
        refusals.add(`${res.status} ${answer.error?.code ?? 'no code'}`);
      } catch (error) {
        if (error instanceof Error && error.message.startsWith('a retried message was refused')) throw error;
        // the gateway is down or cut the connection: the same request again
        if (!(error instanceof SyntaxError)) refusals.add('no answer');
        else refusals.add('a body that is not JSON');
      }
      if (Date.now() - sentAt > retryForMs) return null;
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** `text`: given for a message sent with retries, whose text is unique in its session (so it must be recorded once). */
  private async acknowledged(sessionId: string, eventId: string, sentAt: number, text?: string): Promise<SentMessage> {
    this.acked.push({ sessionId, label: 'user.message', eventId, ...(text === undefined ? {} : { text }) });
    const recorded = await this.waitForJournal(sessionId, (events) => events.find((e) => e.id === eventId), 10_000);
    if (!recorded || recorded.type !== 'UserMessageReceived') throw new Error(`the acknowledged message ${eventId} is not in the journal`);
    return { sessionId, eventId, turnId: recorded.data.turn_id, sentAt };
  }

  /** Records a command the suite published itself and the kernel answered `ok`. */
  ackDirect(ack: AckedCommand): void {
    this.acked.push(ack);
  }

  journal(sessionId: string): Promise<RecordedEvent[]> {
    return this.store.journal.readEvents(sessionId, { limit: 100_000 });
  }

  /** Polls the journal until `predicate` holds for the session's events; null on timeout. */
  async waitForJournal<T>(sessionId: string, predicate: (events: readonly RecordedEvent[]) => T | null | undefined | false, timeoutMs: number): Promise<T | null> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        const found = predicate(await this.journal(sessionId));
        if (found) return found;
      } catch {
        // the store may be locked by an outage scenario: look again
      }
      if (Date.now() > deadline) return null;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The turn's terminal event as soon as the journal holds it (seen time: when this poll saw it). */
  async waitForTurnEnd(sessionId: string, turnId: string, timeoutMs: number): Promise<TurnEnd | null> {
    return this.waitForJournal(
      sessionId,
      (events) => {
        const end = events.find((e) => TERMINAL.has(e.type) && (e.data as { turn_id?: string }).turn_id === turnId);
        if (!end) return null;
        const reason = end.type === 'TurnFailed' ? end.data.reason : end.type === 'TurnRecovered' ? end.data.method : null;
        const message = end.type === 'TurnFailed' ? end.data.message : null;
        return { type: end.type as TurnEnd['type'], reason, message, seenAt: Date.now() };
      },
      timeoutMs,
    );
  }

  /** Waits until the turn has journaled an output of `type` (e.g. the tool use: the harness is mid-turn). */
  async waitForTurnEvent(sessionId: string, turnId: string, type: RecordedEvent['type'], timeoutMs: number): Promise<boolean> {
    const hit = await this.waitForJournal(sessionId, (events) => events.some((e) => e.type === type && (e.data as { turn_id?: string }).turn_id === turnId), timeoutMs);
    return hit === true;
  }

  async close(): Promise<void> {
    await Promise.all([...this.recorders.values()].map((r) => r.stop()));
    await this.store.close();
  }
}
