import type { RecordedEvent } from '@berth/contracts';
import { createSessionData } from '@berth/contracts/testing';
import type { InMemorySandboxRuntime } from '@berth/testing';
import { InMemoryManager } from '../testing/in-memory-manager';
import { ScriptedClaude } from '../testing/scripted-claude';

const SESSION = 'sesn_confirm';
const TURN = 'turn_confirm';
const SANDBOX = `berth-s-${SESSION}-g1`;
const types = (events: readonly RecordedEvent[]) => events.map((e) => e.type);

async function waitFor<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A manager process killed while a harness waits for a tool confirmation, and the one that replaces it (ScriptedClaude in the in-memory runtime). */
describe('a pending tool confirmation across a sandbox-manager restart (real kernel, in-memory runtime)', () => {
  async function waitingTurn() {
    let runtime: InMemorySandboxRuntime | null = null;
    const claude = new ScriptedClaude(() => runtime as InMemorySandboxRuntime);
    const first = new InMemoryManager({ execScript: (input) => claude.script(input) });
    runtime = first.runtime;
    await first.command('CreateSession', SESSION, createSessionData({ permission_mode: 'always_ask' }));
    await first.command('SubmitUserMessage', SESSION, { turn_id: TURN, content: [{ type: 'text', text: 'run echo' }] });
    const ask = await waitFor('the tool use to wait for confirmation', async () => {
      const events = await first.events(SESSION);
      return events.some((e) => e.type === 'TurnAwaitingConfirmation') ? events.find((e) => e.type === 'AgentToolUseRecorded') : undefined;
    });
    return { first, claude, askId: ask.id };
  }

  it('the new manager answers the waiting harness from its output file, follows the rest, and the turn completes once', async () => {
    const { first, claude, askId } = await waitingTurn();
    const second = first.restart();
    await second.command('ConfirmToolUse', SESSION, { tool_use_id: askId, result: 'allow', deny_message: null });
    await waitFor('the turn to complete', async () => types(await second.events(SESSION)).includes('TurnCompleted'));
    await second.settled();

    const events = await second.events(SESSION);
    expect(types(events).filter((t) => t === 'AgentToolResultRecorded')).toHaveLength(1);
    expect(types(events).filter((t) => t === 'AgentMessageRecorded')).toHaveLength(1);
    expect(events.find((e) => e.type === 'TurnCompleted')?.data).toMatchObject({ turn_id: TURN, interrupted: false });
    expect(claude.started.filter((t) => t === TURN)).toHaveLength(1);
    expect(await claude.answersIn(SANDBOX, TURN)).toBe(1);
  });

  it('a confirmation delivered again (the crash came after the answer was written) reaches the harness once', async () => {
    const { first, claude, askId } = await waitingTurn();
    const second = first.restart();
    await second.command('ConfirmToolUse', SESSION, { tool_use_id: askId, result: 'deny', deny_message: 'no' });
    const confirmed = (await second.events(SESSION)).find((e) => e.type === 'ToolUseConfirmed');
    if (confirmed === undefined) throw new Error('no ToolUseConfirmed');
    await second.redeliver(confirmed);
    await waitFor('the turn to complete', async () => types(await second.events(SESSION)).includes('TurnCompleted'));
    await second.settled();
    expect(await claude.answersIn(SANDBOX, TURN)).toBe(1);
    expect((await second.events(SESSION)).find((e) => e.type === 'AgentToolResultRecorded')?.data).toMatchObject({ is_error: true });
  });

  it('after a restart without any answer, the redelivered turn reattaches to the waiting harness instead of starting a second one', async () => {
    const { first, claude, askId } = await waitingTurn();
    const second = first.restart();
    const started = (await second.events(SESSION)).find((e) => e.type === 'TurnStarted');
    if (started === undefined) throw new Error('no TurnStarted');
    const turnDelivery = second.redeliver(started);
    await waitFor('the new manager to follow the turn', async () => second.turns.get(SESSION)?.attached === true);
    await second.command('ConfirmToolUse', SESSION, { tool_use_id: askId, result: 'allow', deny_message: null });
    await turnDelivery;
    expect(types(await second.events(SESSION))).toContain('TurnCompleted');
    expect(claude.started.filter((t) => t === TURN)).toHaveLength(1);
  });
});
