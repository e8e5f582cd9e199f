import type {
  TranscriptRestoreRequest,
  TurnEffectReply,
  TurnOutputRecoveryRequest,
  TurnProbeFacts,
  TurnProbeReply,
  TurnProbeRequest,
  TurnReattachRequest,
} from '@berth/contracts';
import { SandboxManagerUnanswered, type SandboxManagerClient } from '../reconciling/sandbox-manager.port';

type Call = Readonly<{ query: 'probe' | 'reattach' | 'recoverOutput' | 'restoreTranscript'; request: Readonly<Record<string, unknown>> }>;

/**
 * A scripted sandbox-manager: `facts` is what a probe sees; each effect runs `on<Effect>` (which a
 * test uses to report outputs through the kernel, as the real manager would) and answers `done`
 * unless told otherwise. `down` leaves every call unanswered.
 */
export class FakeSandboxManager implements SandboxManagerClient {
  facts: TurnProbeFacts = { sandbox: 'running', harness: { alive: true, attached: true }, input_delivered: true, output: null };
  /** The generation the manager's sandbox is at; null answers with the caller's. */
  generation: number | null = null;
  down = false;
  replies: Partial<Record<'reattach' | 'recoverOutput' | 'restoreTranscript', TurnEffectReply>> = {};
  onReattach: (request: TurnReattachRequest) => Promise<void> = async () => undefined;
  onRecoverOutput: (request: TurnOutputRecoveryRequest) => Promise<void> = async () => undefined;
  readonly calls: Call[] = [];

  async probe(request: TurnProbeRequest): Promise<TurnProbeReply> {
    this.record('probe', request);
    return { ...request, generation: this.generation ?? request.generation, facts: this.facts };
  }

  async reattach(request: TurnReattachRequest): Promise<TurnEffectReply> {
    this.record('reattach', request);
    await this.onReattach(request);
    return this.replies.reattach ?? { outcome: 'done', message: '' };
  }

  async recoverOutput(request: TurnOutputRecoveryRequest): Promise<TurnEffectReply> {
    this.record('recoverOutput', request);
    await this.onRecoverOutput(request);
    return this.replies.recoverOutput ?? { outcome: 'done', message: '' };
  }

  async restoreTranscript(request: TranscriptRestoreRequest): Promise<TurnEffectReply> {
    this.record('restoreTranscript', request);
    return this.replies.restoreTranscript ?? { outcome: 'done', message: '' };
  }

  queries(): string[] {
    return this.calls.map((c) => c.query);
  }

  private record(query: Call['query'], request: object): void {
    if (this.down) throw new SandboxManagerUnanswered(`no sandbox-manager answered ${query}: timeout`);
    this.calls.push({ query, request: { ...request } });
  }
}
