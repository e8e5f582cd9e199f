import { environmentConfigFrom, type EnvironmentConfigParams } from '@berth/contracts';
import type { CommandType, CommandData, RecordedEvent, SessionCommand } from '@berth/contracts';
import { commandFor, createSessionData, testAgentConfig } from '@berth/contracts/testing';
import type { ExecScript } from '@berth/testing';
import { InMemoryManager } from '../testing/in-memory-manager';

const SESSION = 'sesn_wiring1';
const command = <T extends CommandType>(type: T, data: CommandData<T>): SessionCommand => commandFor(type, SESSION, data);

const create = () => command('CreateSession', createSessionData());
const message = (turnId: string) => command('SubmitUserMessage', { turn_id: turnId, content: [{ type: 'text', text: 'write out.txt' }] });

/** What Claude Code prints for a turn that runs one Bash tool and answers. */
const claudeTurn = (sessionId: string, text: string): string[] =>
  [
    { type: 'system', subtype: 'init', session_id: sessionId },
    { type: 'assistant', message: { content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'echo hi > out.txt' } }] }, parent_tool_use_id: null },
    { type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok', is_error: false }] }, parent_tool_use_id: null },
    { type: 'assistant', message: { content: [{ type: 'text', text }] }, parent_tool_use_id: null },
    { type: 'result', subtype: 'success', is_error: false, session_id: sessionId, usage: { input_tokens: 10, output_tokens: 5 } },
  ].map((l) => JSON.stringify(l));

const isHarness = (cmd: readonly string[]) => cmd[3] === 'berth-turn';
const isKill = (cmd: readonly string[]) => cmd.join(' ').includes('kill -s');
const types = (events: readonly RecordedEvent[]) => events.map((e) => e.type);

/** The session's environment (`env_1`, the default of createSessionData) with this config. */
/** Stores an environment as the gateway would: `over` through the config contract. */
async function putEnvironment(manager: InMemoryManager, over: Record<string, unknown>): Promise<void> {
  const now = new Date().toISOString();
  const config = environmentConfigFrom(over as EnvironmentConfigParams);
  await manager.store.environments.put({ id: 'env_1', owner_id: 'owner_1', name: 'e', description: null, config, metadata: {}, created_at: now, updated_at: now, archived_at: null, deleted: false });
}

async function waitFor(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('sandbox-manager turn wiring (real kernel, in-memory runtime)', () => {
  it('binds a sandbox, runs the harness, records its outputs in order and completes with its session id', async () => {
    const harnessEnvs: Record<string, string>[] = [];
    const script: ExecScript = ({ spec }) => {
      if (!isHarness(spec.cmd)) return { lines: [], exitCode: 0 };
      harnessEnvs.push({ ...spec.env });
      return { lines: claudeTurn('h-1', harnessEnvs.length === 1 ? 'Done.' : 'You asked for out.txt.'), exitCode: 0 };
    };
    const manager = new InMemoryManager({ execScript: script });
    await manager.send(create());
    await manager.send(message('turn_1'));
    await manager.settled();

    const events = await manager.events(SESSION);
    expect(types(events)).toEqual(
      expect.arrayContaining(['SandboxBound', 'TurnStarted', 'HarnessSessionRecorded', 'AgentToolUseRecorded', 'AgentToolResultRecorded', 'AgentMessageRecorded', 'UsageRecorded', 'TurnCompleted']),
    );
    const offsets = events.flatMap((e) => ('offset' in e.data ? [e.data.offset] : []));
    expect(offsets).toEqual([0, 1, 2, 3]);
    // The harness talks to its sandbox's egress relay and holds a placeholder, never a key.
    expect(harnessEnvs[0]).toMatchObject({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:3128', ANTHROPIC_API_KEY: 'berth-egress-adds-the-real-key' });
    expect(manager.runtime.created).toBe(1);

    // The second turn resumes the harness's own conversation in the same sandbox.
    await manager.send(message('turn_2'));
    await manager.settled();
    const harnessCalls = manager.sent.filter((c) => c.type === 'CompleteTurn');
    expect(harnessCalls).toHaveLength(2);
    expect(manager.runtime.created).toBe(1);
  });

  it('passes the resume id to the harness on the next turn', async () => {
    const argvs: string[][] = [];
    const manager = new InMemoryManager({
      execScript: ({ spec }) => {
        if (!isHarness(spec.cmd)) return { lines: [], exitCode: 0 };
        argvs.push([...spec.cmd.slice(8)]);
        return { lines: claudeTurn('h-42', 'ok'), exitCode: 0 };
      },
    });
    await manager.send(create());
    await manager.send(message('turn_1'));
    await manager.settled();
    await manager.send(message('turn_2'));
    await manager.settled();
    expect(argvs[0]?.some((a) => a.startsWith('--resume'))).toBe(false);
    expect(argvs[1]).toContain('--resume=h-42');
  });

  it('gives no sandbox to an environment on the host network unless the operator allowed it', async () => {
    const manager = new InMemoryManager({ execScript: () => ({ lines: [], exitCode: 0 }) });
    await putEnvironment(manager, { type: 'cloud', network: 'host' });
    await manager.send(create());
    await manager.send(message('turn_1'));
    await manager.settled();
    const events = await manager.events(SESSION);
    expect(events.find((e) => e.type === 'SandboxStartFailed')?.data).toMatchObject({ message: expect.stringContaining('BERTH_ALLOW_HOST_NETWORK') });
    expect(events.find((e) => e.type === 'TurnFailed')?.data).toMatchObject({ reason: 'sandbox_start_failed' });
    expect(manager.runtime.created).toBe(0);
  });

  it('points a host sandbox\'s harness at the relay port picked for that sandbox when the operator allowed it', async () => {
    const envs: Record<string, string>[] = [];
    const manager = new InMemoryManager({
      allowHostNetwork: true,
      execScript: ({ spec }) => {
        if (!isHarness(spec.cmd)) return { lines: [], exitCode: 0 };
        envs.push({ ...spec.env });
        return { lines: claudeTurn('h-5', 'ok'), exitCode: 0 };
      },
    });
    await putEnvironment(manager, { type: 'cloud', network: 'host' });
    await manager.send(create());
    await manager.send(message('turn_1'));
    await manager.settled();
    const sandbox = await manager.runtime.inspect(`berth-s-${SESSION}-g1`);
    expect(sandbox?.egressRelayPort).toEqual(expect.any(Number));
    expect(envs[0]?.['ANTHROPIC_BASE_URL']).toBe(`http://127.0.0.1:${sandbox?.egressRelayPort}`);
  });

  it('stops a running harness on interrupt and completes the turn as interrupted', async () => {
    let killed: () => void = () => undefined;
    const killedPromise = new Promise<void>((r) => (killed = r));
    const manager = new InMemoryManager({
      execScript: async ({ spec }) => {
        if (isKill(spec.cmd)) killed();
        if (!isHarness(spec.cmd)) return { lines: [], exitCode: 0 };
        await killedPromise;
        return { lines: [JSON.stringify({ type: 'system', subtype: 'init', session_id: 'h-9' })], exitCode: 137 };
      },
    });
    await manager.send(create());
    await manager.send(message('turn_1'));
    await waitFor(async () => manager.turns.get(SESSION)?.attached === true);
    const interruptedAt = Date.now();
    await manager.send(command('InterruptTurn', {}));
    await manager.settled();
    const completed = (await manager.events(SESSION)).find((e) => e.type === 'TurnCompleted');
    expect(completed?.data).toMatchObject({ turn_id: 'turn_1', interrupted: true });
    expect(Date.now() - interruptedAt).toBeLessThan(2_000);
  });

  it('counts a turn as settled at its terminal line while its process still exits (the gauge and the duration)', async () => {
    let exit: () => void = () => undefined;
    const exited = new Promise<void>((r) => (exit = r));
    const manager = new InMemoryManager({
      execScript: async ({ spec, emit }) => {
        if (!isHarness(spec.cmd)) return { lines: [], exitCode: 0 };
        for (const line of claudeTurn('h-5', 'Done.')) emit(line);
        await exited;
        return { lines: [], exitCode: 0 };
      },
    });
    const gauge = async () => (await manager.registry.getSingleMetricAsString('berth_turns_running')).split('\n').find((l) => l.startsWith('berth_turns_running '));
    const durations = async () => (await manager.registry.getSingleMetricAsString('berth_turn_duration_seconds')).split('\n').find((l) => l.startsWith('berth_turn_duration_seconds_count'));
    await manager.send(create());
    await manager.send(message('turn_1'));
    await waitFor(async () => types(await manager.events(SESSION)).includes('TurnCompleted'));

    expect(manager.turns.all()).toHaveLength(1);
    expect(await gauge()).toBe('berth_turns_running 0');
    expect(await durations()).toBe('berth_turn_duration_seconds_count{harness="claude-code"} 1');
    exit();
    await manager.settled();
    expect(manager.turns.all()).toHaveLength(0);
    expect(await durations()).toBe('berth_turn_duration_seconds_count{harness="claude-code"} 1');
  });

  it("starts the next turn's harness once the previous one exited, without waiting for that turn's last transcript mirror", async () => {
    let endLastMirror: () => void = () => undefined;
    const lastMirrorMayEnd = new Promise<void>((r) => (endLastMirror = r));
    let firstExited = false;
    const started: string[] = [];
    const manager: InMemoryManager = new InMemoryManager({
      execScript: async ({ spec, emit }) => {
        // The transcript listing of a full mirror: the one after the first harness's exit hangs until the test lets it end.
        if (spec.cmd[3] === 'berth-transcripts') {
          if (firstExited) await lastMirrorMayEnd;
          return { lines: [], exitCode: 0 };
        }
        if (!isHarness(spec.cmd)) return { lines: [], exitCode: 0 };
        started.push(spec.cmd[5]);
        for (const line of claudeTurn('h-1', 'ok')) emit(line);
        if (started.length === 1) {
          await waitFor(async () => types(await manager.events(SESSION)).includes('TurnCompleted'));
          firstExited = true;
        }
        return { lines: [], exitCode: 0 };
      },
    });
    await manager.send(create());
    await manager.send(message('turn_1'));
    await waitFor(async () => firstExited);
    await manager.send(message('turn_2'));
    await waitFor(async () => started.length === 2);
    expect(started).toEqual(['turn_1', 'turn_2']);
    endLastMirror();
    await manager.settled();
    expect(types(await manager.events(SESSION)).filter((t) => t === 'TurnCompleted')).toHaveLength(2);
  });

  it('reattaches a turn a previous process started: replays its output file from the last recorded offset, no duplicates', async () => {
    const lines = claudeTurn('h-7', 'Done.');
    let harnessRuns = 0;
    const manager = new InMemoryManager({
      execScript: ({ spec }) => {
        if (isHarness(spec.cmd)) harnessRuns++;
        // The turn's pid file says a harness ran here and has exited.
        if (spec.cmd.join(' ').includes('kill -0')) return { lines: ['7 dead 0'], exitCode: 0 };
        return { lines: [], exitCode: 0 };
      },
    });
    await manager.send(create());
    await manager.settled();
    const sandbox = (await manager.events(SESSION)).find((e) => e.type === 'SandboxBound');
    const sandboxId = sandbox?.type === 'SandboxBound' ? sandbox.data.sandbox_id : '';
    await manager.runtime.writeFile(sandboxId, '/home/agent/.berth/turns/turn_1.jsonl', `${lines.join('\n')}\n`);
    // The crashed process had already recorded the first two outputs.
    await manager.send(
      command('RecordAgentOutput', {
        turn_id: 'turn_1',
        generation: 1,
        offset: 0,
        harness_session_id: 'h-7',
        outputs: [
          { kind: 'tool_use', tool_use_id: 'toolu_1', name: 'Bash', input: { command: 'echo hi > out.txt' }, needs_confirmation: false },
          { kind: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'ok' }], is_error: false },
        ],
      }),
    );
    await manager.send(message('turn_1'));
    await manager.settled();

    const events = await manager.events(SESSION);
    expect(harnessRuns).toBe(0);
    expect(types(events).filter((t) => t === 'AgentToolUseRecorded')).toHaveLength(1);
    expect(types(events).filter((t) => t === 'AgentMessageRecorded')).toHaveLength(1);
    expect(types(events)).toContain('TurnCompleted');
  });

  it('leaves a turn whose container died to sandbox-death recovery instead of failing it as a harness failure', async () => {
    let died: () => void = () => undefined;
    const death = new Promise<void>((r) => (died = r));
    const manager = new InMemoryManager({
      execScript: async ({ spec }) => {
        if (!isHarness(spec.cmd)) return { lines: [], exitCode: 0 };
        await death;
        return { lines: [], exitCode: 137 };
      },
    });
    await manager.send(create());
    await manager.send(message('turn_1'));
    await waitFor(async () => manager.turns.get(SESSION)?.attached === true);
    manager.runtime.kill(`berth-s-${SESSION}-g1`);
    died();
    await manager.settled();
    expect(manager.sent.map((c) => c.type)).not.toContain('FailTurn');
    expect(manager.sent.map((c) => c.type)).not.toContain('CompleteTurn');
  });

  it('reports the sandbox death when the harness exec ends before Docker shows its container dead', async () => {
    const sandboxId = `berth-s-${SESSION}-g1`;
    const manager: InMemoryManager = new InMemoryManager({
      execScript: ({ spec }) => {
        if (!isHarness(spec.cmd)) return { lines: [], exitCode: 0 };
        // docker kill: the exec's stream ends first, the container shows dead a moment later.
        setTimeout(() => manager.runtime.kill(sandboxId), 200);
        return { lines: [JSON.stringify({ type: 'system', subtype: 'init', session_id: 'h-5' })], exitCode: 137 };
      },
    });
    await manager.send(create());
    await manager.send(message('turn_1'));
    await manager.settled();
    const sent = manager.sent.map((c) => c.type);
    expect(sent).not.toContain('FailTurn');
    expect(manager.sent.find((c) => c.type === 'ReportSandboxDied')?.data).toMatchObject({ sandbox_id: sandboxId, generation: 1, cause: 'die', exit_code: 137 });
    expect(types(await manager.events(SESSION))).toContain('SandboxLost');
  });

  it('mirrors the transcript while the harness runs a silent tool step', async () => {
    const transcript = '/home/agent/.claude/projects/-workspace/h-1.jsonl';
    let release: () => void = () => undefined;
    const silentStepEnds = new Promise<void>((r) => (release = r));
    let harnessRuns = 0;
    const manager: InMemoryManager = new InMemoryManager({
      execScript: async ({ container, spec }) => {
        if (spec.cmd[3] === 'berth-transcripts') {
          const file = await manager.runtime.readFile(container, transcript);
          return { lines: file === null ? [] : [`${file.length} ${transcript}`], exitCode: 0 };
        }
        if (!isHarness(spec.cmd)) return { lines: [], exitCode: 0 };
        harnessRuns++;
        await manager.runtime.writeFile(container, transcript, harnessRuns === 1 ? '{"turn":1}\n' : '{"turn":1}\n{"turn":2,"tool":"sleep 5"}\n');
        if (harnessRuns === 2) await silentStepEnds;
        return { lines: claudeTurn('h-1', 'ok'), exitCode: 0 };
      },
    });
    await manager.send(create());
    await manager.send(message('turn_1'));
    await manager.settled();
    expect(await manager.store.transcripts.size(SESSION, transcript)).toBe(11);

    await manager.send(message('turn_2'));
    // The harness prints nothing during its tool step; the transcript is mirrored anyway.
    await waitFor(async () => (await manager.store.transcripts.size(SESSION, transcript)) > 11, 4_000);
    release();
    await manager.settled();
    expect(types(await manager.events(SESSION)).filter((t) => t === 'TurnCompleted')).toHaveLength(2);
  });

  it('starts a new harness conversation when the sandbox was lost before any transcript was mirrored', async () => {
    const argvs: string[][] = [];
    const manager = new InMemoryManager({
      execScript: ({ spec }) => {
        if (!isHarness(spec.cmd)) return { lines: [], exitCode: 0 };
        argvs.push([...spec.cmd.slice(8)]);
        return { lines: claudeTurn(`h-${argvs.length}`, 'ok'), exitCode: 0 };
      },
    });
    await manager.send(create());
    await manager.send(message('turn_1'));
    await manager.settled();
    // The sandbox dies; the harness never wrote a transcript the mirror could copy.
    const sandboxId = `berth-s-${SESSION}-g1`;
    manager.runtime.kill(sandboxId);
    await manager.send(command('ReportSandboxDied', { sandbox_id: sandboxId, generation: 1, cause: 'die', exit_code: 137 }));
    await manager.settled();

    await manager.send(message('turn_2'));
    await manager.settled();
    expect(argvs).toHaveLength(2);
    expect(argvs[1]?.some((a) => a.startsWith('--resume'))).toBe(false);
    const events = await manager.events(SESSION);
    expect(events.filter((e) => e.type === 'TurnCompleted').map((e) => e.data)).toEqual([expect.objectContaining({ turn_id: 'turn_1' }), expect.objectContaining({ turn_id: 'turn_2' })]);
    expect(events.filter((e) => e.type === 'HarnessSessionRecorded').map((e) => e.data)).toContainEqual(expect.objectContaining({ harness_session_id: 'h-2' }));
  });

  it('runs every turn with the agent version the session pinned: a session of v1 keeps v1 after v2 exists', async () => {
    const argvs: string[][] = [];
    const manager = new InMemoryManager({
      execScript: ({ spec }) => {
        if (!isHarness(spec.cmd)) return { lines: [], exitCode: 0 };
        argvs.push([...spec.cmd]);
        return { lines: claudeTurn(`h-${argvs.length}`, 'ok'), exitCode: 0 };
      },
    });
    await manager.defineAgentVersion(2, testAgentConfig({ model: 'claude-opus-4-7', system: 'You are version two.' }));
    await manager.send(create());
    await manager.send(message('turn_1'));
    await manager.settled();
    await manager.send(commandFor('CreateSession', 'sesn_wiring2', createSessionData({ agent: { id: 'agent_1', version: 2 } })));
    await manager.send(commandFor('SubmitUserMessage', 'sesn_wiring2', { turn_id: 'turn_v2', content: [{ type: 'text', text: 'hi' }] }));
    await manager.settled();
    await manager.send(message('turn_2'));
    await manager.settled();

    const [v1First, v2, v1Second] = argvs;
    expect(v1First).toContain('--model=claude-sonnet-4-5');
    expect(v1First?.some((a) => a.startsWith('--append-system-prompt'))).toBe(false);
    expect(v2).toEqual(expect.arrayContaining(['--model=claude-opus-4-7', '--append-system-prompt=You are version two.']));
    expect(v1Second).toContain('--model=claude-sonnet-4-5');
  });

  it('fails the turn with a named reason when the pinned agent version is not in the store', async () => {
    const manager = new InMemoryManager({ execScript: () => ({ lines: [], exitCode: 0 }) });
    await manager.send(commandFor('CreateSession', 'sesn_noagent', createSessionData({ agent: { id: 'agent_1', version: 9 } })));
    await manager.send(commandFor('SubmitUserMessage', 'sesn_noagent', { turn_id: 'turn_x', content: [{ type: 'text', text: 'hi' }] }));
    await manager.settled();
    const failed = (await manager.events('sesn_noagent')).find((e) => e.type === 'TurnFailed');
    expect(failed?.data).toMatchObject({ reason: 'harness_failed', message: expect.stringContaining('agent agent_1 version 9') });
  });
});
