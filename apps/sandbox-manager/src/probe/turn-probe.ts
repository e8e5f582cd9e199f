import type { SandboxStateReply, SandboxStateRequest, TurnProbeFacts, TurnProbeReply, TurnProbeRequest } from '@berth/contracts';
import { harnessAdapterFor } from '@berth/harness';
import type { SandboxRuntime } from '@berth/ports';
import { sessionSandboxName } from '@berth/sandbox-domain';
import { execAndCollect } from '../sandboxes/sandbox-exec';
import type { SessionView } from '@berth/sandbox-workflow';
import type { SandboxService } from '../sandboxes/sandbox-service';
import type { TurnExecutions } from '../turns/turn-executions';
import { parseTurnStatus, turnFiles, turnStatusCommand, wholeLines } from '../turns/turn-files';

/**
 * What the manager can see of one turn right now, for the turn-reconciler: the container at the
 * asked generation, whether the turn's harness lives (and whether this process streams it), and
 * what its output file holds. `sandbox` answers the gateway's recover, which has no turn to ask
 * about: the container's state alone, without an exec into it (it must answer within the
 * gateway's probe timeout even on a loaded engine, or recover would replace a healthy sandbox).
 */
export class TurnProbe {
  constructor(
    private readonly deps: Readonly<{ runtime: SandboxRuntime; sandboxes: SandboxService; turns: TurnExecutions; view: (sessionId: string) => Promise<SessionView> }>,
  ) {}

  async probe(request: TurnProbeRequest): Promise<TurnProbeReply> {
    return { ...request, facts: await this.facts(request) };
  }

  async sandbox(request: SandboxStateRequest): Promise<SandboxStateReply> {
    return { ...request, sandbox: await this.container(request.session_id, request.generation) };
  }

  private async container(sessionId: string, generation: number): Promise<TurnProbeFacts['sandbox']> {
    if (generation < 1) return 'missing';
    if (this.deps.sandboxes.isStarting(sessionId, generation)) return 'starting';
    const info = await this.deps.runtime.inspect(sessionSandboxName(sessionId, generation));
    return info === null ? 'missing' : info.running ? 'running' : 'exited';
  }

  private async facts(request: TurnProbeRequest): Promise<TurnProbeFacts> {
    const unknown: TurnProbeFacts = { sandbox: 'missing', harness: { alive: false, attached: false }, input_delivered: null, output: null };
    const state = await this.container(request.session_id, request.generation);
    if (state === 'missing' || state === 'starting') return { ...unknown, sandbox: state };
    const name = sessionSandboxName(request.session_id, request.generation);
    const running = this.deps.turns.get(request.session_id);
    const attached = running !== undefined && running.turnId === request.turn_id && running.generation === request.generation && running.attached;
    const status = state === 'running' ? parseTurnStatus((await execAndCollect(this.deps.runtime, name, turnStatusCommand(request.turn_id))).lines[0]) : null;
    return {
      sandbox: state,
      harness: { alive: attached || (status?.alive ?? false), attached },
      input_delivered: status === null ? null : true,
      output: await this.output(name, request),
    };
  }

  private async output(name: string, request: TurnProbeRequest): Promise<TurnProbeFacts['output']> {
    const file = await this.deps.runtime.readFile(name, turnFiles(request.turn_id).output);
    if (file === null) return null;
    const session = await this.deps.view(request.session_id);
    const adapter = harnessAdapterFor(session.harness);
    let state = adapter.initialState(session.permission_mode);
    let outputs = 0;
    let complete = false;
    for (const line of wholeLines(file).lines) {
      const step = adapter.parseLine(line, state);
      state = step.state;
      outputs += step.outputs.length;
      if (step.terminal) complete = true;
    }
    return { complete, last_offset: outputs === 0 ? null : outputs - 1 };
  }
}
