import type { RecordedEvent } from '@berth/contracts';
import { createSessionData } from '@berth/contracts/testing';
import type { InMemorySandboxRuntime } from '@berth/testing';
import { InMemoryManager } from '../testing/in-memory-manager';
import { ScriptedClaude } from '../testing/scripted-claude';

const SESSION = 'sesn_continued';
const TURN = 'turn_continued';
const G2 = `berth-s-${SESSION}-g2`;

async function waitFor<T>(what: string, check: () => Promise<T | undefined | null | false>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const texts = (events: readonly RecordedEvent[]) =>
  events.flatMap((e) => (e.type === 'AgentMessageRecorded' ? e.data.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])) : []));

/**
 * A turn paused while its harness waited for a confirmation goes on in a new harness (a new
 * sandbox) once answered; the manager that runs that harness is killed midway and the next one
 * follows it. The continuing harness numbers its outputs on after its released one's, so the new
 * manager must re-read its output file from that number, not from 0: else every output at a file
 * position up to the kernel's last offset would be skipped as recorded.
 */
describe('a sandbox-manager restart while a turn continues after a pause (real kernel, in-memory runtime)', () => {
  it('the new manager follows the continuing harness and records each of its outputs once', async () => {
    let runtime: InMemorySandboxRuntime | null = null;
    let open: () => void = () => undefined;
    const closing = new Promise<void>((resolve) => (open = resolve));
    // The released harness says a preface and asks (offsets 0–1); the continuing one says it again, re-issues the call (answered with the carried answer), and holds before its closing text.
    const claude = new ScriptedClaude(() => runtime as InMemorySandboxRuntime, { preface: 'Let me run it.', beforeClosing: (_turn, run) => (run > 1 ? closing : Promise.resolve()) });
    const first = new InMemoryManager({ execScript: (input) => claude.script(input) });
    runtime = first.runtime;
    await first.command('CreateSession', SESSION, createSessionData({ permission_mode: 'always_ask' }));
    await first.command('SubmitUserMessage', SESSION, { turn_id: TURN, content: [{ type: 'text', text: 'run echo' }] });
    const ask = await waitFor('the tool use to wait for confirmation', async () => {
      const events = await first.events(SESSION);
      return events.some((e) => e.type === 'TurnAwaitingConfirmation') ? events.find((e) => e.type === 'AgentToolUseRecorded') : undefined;
    });
    await first.command('PauseSession', SESSION, {});
    await waitFor('the paused sandbox to go', async () => (await first.runtime.inspect(`berth-s-${SESSION}-g1`)) === null);

    await first.command('ConfirmToolUse', SESSION, { tool_use_id: ask.id, result: 'allow', deny_message: null });
    await waitFor('the continuing harness to report the tool result', async () => (await first.events(SESSION)).some((e) => e.type === 'AgentToolResultRecorded'));
    expect(claude.started).toEqual([TURN, TURN]);

    const second = first.restart();
    const started = (await second.events(SESSION)).find((e) => e.type === 'TurnStarted');
    if (started === undefined) throw new Error('no TurnStarted');
    const following = second.redeliver(started);
    await waitFor('the new manager to follow the continuing harness', async () => second.turns.get(SESSION)?.attached === true);
    open();
    await following;
    await second.settled();

    const events = await second.events(SESSION);
    expect(events.filter((e) => e.type === 'TurnCompleted').map((e) => e.data)).toEqual([expect.objectContaining({ turn_id: TURN, interrupted: false })]);
    expect(texts(events)).toEqual(['Let me run it.', 'Let me run it.', 'Done.']);
    // The re-issued call is the journaled one: one tool use, one result under it, the carried answer written once.
    expect(events.filter((e) => e.type === 'AgentToolUseRecorded').map((e) => e.id)).toEqual([ask.id]);
    expect(events.filter((e) => e.type === 'AgentToolResultRecorded')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'UsageRecorded')).toHaveLength(1);
    expect(await claude.answersIn(G2, TURN)).toBe(1);
    expect(claude.started).toEqual([TURN, TURN]);
  }, 20_000);
});
