import { SandboxManagerQueries, SandboxStateReplySchema, Subjects, TurnEffectReplySchema, TurnProbeReplySchema } from '@berth/contracts';
import { silentLogger, startNatsServer, type NatsServerHandle } from '@berth/testing';
import type { NatsConnection } from '@nats-io/nats-core';
import { InMemoryManager } from '../testing/in-memory-manager';
import { ProbeResponder } from './probe-responder';
import { TurnProbe } from './turn-probe';
import { TurnQueries } from './turn-queries';
import { createSessionData } from '@berth/contracts/testing';

const SESSION = 'sesn_probe1';
const quiet = silentLogger;
const claudeLines = [
  { type: 'system', subtype: 'init', session_id: 'h-1' },
  { type: 'assistant', message: { content: [{ type: 'text', text: 'Done.' }] }, parent_tool_use_id: null },
  { type: 'result', subtype: 'success', is_error: false, session_id: 'h-1', usage: { input_tokens: 1, output_tokens: 1 } },
].map((l) => JSON.stringify(l));

/** The request/reply queries other services send the sandbox-manager, over a real nats-server. */
describe('sandbox-manager queries over NATS request/reply', () => {
  let nats: NatsServerHandle;
  let nc: NatsConnection;
  let manager: InMemoryManager;
  let responder: ProbeResponder;

  const ask = async (query: string, body: unknown) => (await nc.request(Subjects.query('sandbox-manager', query), JSON.stringify(body), { timeout: 2_000 })).json();

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await nats.connect();
    manager = new InMemoryManager({ execScript: () => ({ lines: [], exitCode: 0 }) });
    await manager.command('CreateSession', SESSION, createSessionData());
    await manager.settled();
    const probe = new TurnProbe({ runtime: manager.runtime, sandboxes: manager.sandboxes, turns: manager.turns, view: (id) => manager.shell.view(id) });
    const queries = new TurnQueries({ probe, shell: manager.shell, runtime: manager.runtime, transcripts: manager.store.transcripts, send: manager.sendCommand });
    responder = new ProbeResponder(nc, probe, queries, quiet);
    responder.start();
  });
  afterAll(async () => {
    responder.stop();
    await nc.close();
    await nats.stop();
  });

  it('reports the running sandbox and what the turn output file holds', async () => {
    await manager.runtime.writeFile(`berth-s-${SESSION}-g1`, '/home/agent/.berth/turns/turn_1.jsonl', `${claudeLines.join('\n')}\n`);
    const reply = TurnProbeReplySchema.parse(await ask(SandboxManagerQueries.probe, { session_id: SESSION, turn_id: 'turn_1', generation: 1 }));
    expect(reply).toMatchObject({ generation: 1, facts: { sandbox: 'running', harness: { alive: false, attached: false }, output: { complete: true, last_offset: 1 } } });
  });

  it('reports a generation without a container as missing', async () => {
    const reply = TurnProbeReplySchema.parse(await ask(SandboxManagerQueries.probe, { session_id: SESSION, turn_id: 'turn_1', generation: 7 }));
    expect(reply.facts).toEqual({ sandbox: 'missing', harness: { alive: false, attached: false }, input_delivered: null, output: null });
  });

  it('answers a malformed request with an error body naming the problem', async () => {
    const reply = (await ask(SandboxManagerQueries.probe, { session_id: 'not a token', turn_id: 'turn_1', generation: 1 })) as { error: { message: string } };
    expect(reply.error.message).toContain('session_id');
  });

  it('says whether a transcript can be restored: impossible with nothing mirrored, done once something is', async () => {
    const request = { session_id: SESSION, turn_id: 'turn_1', generation: 1, transcript_bytes: 10 };
    expect(TurnEffectReplySchema.parse(await ask(SandboxManagerQueries.restoreTranscript, request)).outcome).toBe('impossible');
    await manager.store.transcripts.append({ session_id: SESSION, path: '/home/agent/.claude/projects/-workspace/h-1.jsonl', offset: 0, data: '{"a":1}\n' });
    expect(TurnEffectReplySchema.parse(await ask(SandboxManagerQueries.restoreTranscript, request)).outcome).toBe('done');
  });
  it('answers a turn probe without a turn (placeholder id) with the sandbox alone', async () => {
    const reply = TurnProbeReplySchema.parse(await ask(SandboxManagerQueries.probe, { session_id: SESSION, turn_id: 'turn_none', generation: 1 }));
    expect(reply.facts).toEqual({ sandbox: 'running', harness: { alive: false, attached: false }, input_delivered: null, output: null });
  });

  // Last: it kills the session's container.
  it('answers the session-level sandbox question: running when bound, missing when never bound, exited once killed', async () => {
    const state = async (session_id: string, generation: number) =>
      SandboxStateReplySchema.parse(await ask(SandboxManagerQueries.sandbox, { session_id, generation }));
    expect(await state(SESSION, 1)).toEqual({ session_id: SESSION, generation: 1, sandbox: 'running' });
    expect((await state('sesn_never_bound', 0)).sandbox).toBe('missing');
    expect((await state('sesn_never_bound', 1)).sandbox).toBe('missing');
    manager.runtime.kill(`berth-s-${SESSION}-g1`);
    expect((await state(SESSION, 1)).sandbox).toBe('exited');
    const malformed = (await ask(SandboxManagerQueries.sandbox, { session_id: SESSION })) as { error: { message: string } };
    expect(malformed.error.message).toContain('generation');
  });
});
