import type { AgentOutput, TranscriptRestoreRequest, TurnEffectReply, TurnOutputRecoveryRequest, TurnReattachRequest } from '@berth/contracts';
import { harnessAdapterFor, splitOutputs } from '@berth/harness';
import type { CommandBus, Logger, SandboxRuntime, TranscriptMirror } from '@berth/ports';
import { sessionSandboxName } from '@berth/sandbox-domain';
import type { ManagerCommands } from '../sessions/manager-commands';
import { sendReliably } from '../sessions/send-reliably';
import type { SessionEventReactor } from '../sessions/session-event-reactor';
import type { SessionFactsReader } from '../sessions/session-facts';
import { turnFiles } from '../turns/turn-files';
import type { TurnProbe } from './turn-probe';

const MAX_OUTPUTS_PER_COMMAND = 500;
const done = (message = ''): TurnEffectReply => ({ outcome: 'done', message });
const impossible = (message: string): TurnEffectReply => ({ outcome: 'impossible', message });

/** The turn-reconciler's effects: reattach a live harness, recover a finished output file, check a transcript can be restored. */
export class TurnQueries {
  constructor(
    private readonly deps: Readonly<{
      probe: TurnProbe;
      reactor: SessionEventReactor;
      runtime: SandboxRuntime;
      facts: SessionFactsReader;
      transcripts: TranscriptMirror;
      bus: CommandBus;
      commands: ManagerCommands;
      log: Logger;
    }>,
  ) {}

  async reattach(request: TurnReattachRequest): Promise<TurnEffectReply> {
    const { facts } = await this.deps.probe.probe(request);
    if (facts.harness.attached) return done('the turn is already streamed by this manager');
    if (!facts.harness.alive && facts.output?.complete !== true) return impossible('the harness is not running and its output file is incomplete');
    const resumed = await this.deps.reactor.resumeTurn(request.session_id, request.turn_id, request.generation);
    return resumed ? done('reattached') : impossible('the turn is not current on this sandbox generation');
  }

  /** Reports the output file's outputs in `from..through` as `RecordAgentOutput` (the kernel skips those it has). */
  async recoverOutput(request: TurnOutputRecoveryRequest): Promise<TurnEffectReply> {
    const name = sessionSandboxName(request.session_id, request.generation);
    const file = await this.deps.runtime.readFile(name, turnFiles(request.turn_id).output);
    if (file === null) return impossible('the turn has no output file in its sandbox');
    const { state } = await this.deps.facts.load(request.session_id);
    const adapter = harnessAdapterFor(state.harness);
    let parse = adapter.initialState(state.permission_mode);
    let harnessSessionId: string | null = null;
    const outputs: AgentOutput[] = [];
    for (const line of file.subarray(0, file.lastIndexOf(0x0a) + 1).toString('utf8').split('\n')) {
      if (line === '') continue;
      const step = adapter.parseLine(line, parse);
      parse = step.state;
      harnessSessionId = step.harnessSessionId ?? harnessSessionId;
      outputs.push(...step.outputs);
    }
    const through = Math.min(request.through_offset ?? outputs.length - 1, outputs.length - 1);
    let offset = request.from_offset;
    for (const batch of splitOutputs(outputs.slice(request.from_offset, through + 1), MAX_OUTPUTS_PER_COMMAND)) {
      const key = `out_${request.session_id}_${request.turn_id}_g${request.generation}_${offset}_${batch.length}`;
      await sendReliably(
        this.deps.bus,
        this.deps.commands.make('RecordAgentOutput', request.session_id, key, {
          turn_id: request.turn_id,
          generation: request.generation,
          offset,
          outputs: batch,
          harness_session_id: harnessSessionId,
        }),
        this.deps.log,
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
