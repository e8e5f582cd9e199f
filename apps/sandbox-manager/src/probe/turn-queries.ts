import type { AgentOutput, TranscriptRestoreRequest, TurnEffectReply, TurnOutputRecoveryRequest, TurnReattachRequest } from '@berth/contracts';
import { harnessAdapterFor, splitOutputs } from '@berth/harness';
import type { SandboxRuntime, TranscriptMirror } from '@berth/ports';
import { sessionSandboxName } from '@berth/sandbox-domain';
import { managerCommands } from '@berth/sandbox-workflow';
import { turnFiles, wholeLines } from '../turns/turn-files';
import type { SandboxManagerShell } from '../workflow/sandbox-manager-shell';
import type { TurnProbe } from './turn-probe';
import type { SendManagerCommand } from '../workflow/manager-sender';

const MAX_OUTPUTS_PER_COMMAND = 500;
const done = (message = ''): TurnEffectReply => ({ outcome: 'done', message });
const impossible = (message: string): TurnEffectReply => ({ outcome: 'impossible', message });

/** The turn-reconciler's effects: reattach a live harness, recover a finished output file, check a transcript can be restored. */
export class TurnQueries {
  constructor(
    private readonly deps: Readonly<{
      probe: TurnProbe;
      shell: SandboxManagerShell;
      runtime: SandboxRuntime;
      transcripts: TranscriptMirror;
      send: SendManagerCommand;
    }>,
  ) {}

  async reattach(request: TurnReattachRequest): Promise<TurnEffectReply> {
    const { facts } = await this.deps.probe.probe(request);
    if (facts.harness.attached) return done('the turn is already streamed by this manager');
    if (!facts.harness.alive && facts.output?.complete !== true) return impossible('the harness is not running and its output file is incomplete');
    const reply = await this.deps.shell.reattach(request.session_id, request.turn_id, request.generation);
    return { outcome: reply.outcome, message: reply.message };
  }

  /** Reports the output file's outputs in `from..through` as `RecordAgentOutput` (the kernel skips those it has). */
  async recoverOutput(request: TurnOutputRecoveryRequest): Promise<TurnEffectReply> {
    const name = sessionSandboxName(request.session_id, request.generation);
    const file = await this.deps.runtime.readFile(name, turnFiles(request.turn_id).output);
    if (file === null) return impossible('the turn has no output file in its sandbox');
    const session = await this.deps.shell.view(request.session_id);
    const adapter = harnessAdapterFor(session.harness);
    let parse = adapter.initialState(session.permission_mode);
    let harnessSessionId: string | null = null;
    const outputs: AgentOutput[] = [];
    for (const line of wholeLines(file).lines) {
      const step = adapter.parseLine(line, parse);
      parse = step.state;
      harnessSessionId = step.harnessSessionId ?? harnessSessionId;
      outputs.push(...step.outputs);
    }
    const through = Math.min(request.through_offset ?? outputs.length - 1, outputs.length - 1);
    let offset = request.from_offset;
    for (const batch of splitOutputs(outputs.slice(request.from_offset, through + 1), MAX_OUTPUTS_PER_COMMAND)) {
      await this.deps.send(
        managerCommands.agentOutput(request.session_id, { turn_id: request.turn_id, generation: request.generation, offset, outputs: batch, harness_session_id: harnessSessionId }),
      );
      offset += batch.length;
    }
    return done(`reported outputs ${request.from_offset}..${through}`);
  }

  /** The mirror restores into the next sandbox when its first turn starts; here we only check there is something to restore. */
  async restoreTranscript(request: TranscriptRestoreRequest): Promise<TurnEffectReply> {
    const files = await this.deps.transcripts.files(request.session_id);
    const bytes = files.reduce((sum, f) => sum + Buffer.byteLength(f.data), 0);
    if (bytes === 0) return impossible('no transcript was mirrored for this session');
    return done(`${files.length} transcript file(s), ${bytes} bytes, restore into the next sandbox`);
  }
}
