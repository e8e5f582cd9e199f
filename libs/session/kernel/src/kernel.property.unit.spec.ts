import { FixedClock } from '@berth/core/testing';
import type { SessionCommand } from '@berth/contracts';
import { evolve, initialState, type SessionState } from '@berth/session-domain';
import fc from 'fast-check';
import { createSessionKernel } from './kernel';
import { commandsFor, InMemoryJournal } from './testing';

const SID = 'sesn_p';

/** Commands the platform sends a session, by name, so fast-check can shrink to a readable sequence. */
function commandOf(name: string, n: number): SessionCommand {
  const c = commandsFor(SID);
  const turn = `turn_${n % 3}`;
  const generation = 1 + (n % 2);
  switch (name) {
    case 'message':
      return c.message(turn);
    case 'bind':
      return c.bind(generation);
    case 'died':
      return c.died(generation);
    case 'complete':
      return c.complete(turn, generation);
    case 'pending':
      return c.transcriptPending(turn);
    case 'terminate':
      return c.terminate();
    default:
      return c.recover({ exists: n % 2 === 0, running: n % 2 === 0, expiry_known: true, expired: false });
  }
}

describe('SessionKernel under redelivery and lost races (property)', () => {
  it('keeps seqs gap-free, applies each command once, and its snapshots agree with the journal', async () => {
    const step = fc.record({
      name: fc.constantFrom('message', 'bind', 'died', 'complete', 'pending', 'terminate', 'recover'),
      n: fc.nat(5),
      redeliver: fc.boolean(),
      loseRace: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 25 }), async (steps) => {
        const journal = new InMemoryJournal();
        const kernel = createSessionKernel({ journal, snapshots: journal.snapshots, clock: new FixedClock() });
        await kernel.execute(commandsFor(SID).create());
        for (const { name, n, redeliver, loseRace } of steps) {
          const command = commandOf(name, n);
          journal.failNextCommitWithConflict = loseRace ? 1 : 0;
          const first = await kernel.execute(command);
          if (redeliver) {
            const again = await kernel.execute(command);
            if (first.ok && first.events.length > 0) expect(again).toEqual({ ...first, duplicate: true });
          }
        }
        const events = journal.all(SID);
        expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
        expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
        const fromScratch = events.reduce<SessionState>(evolve, initialState());
        expect((await kernel.load(SID)).state).toEqual(fromScratch);
      }),
      { numRuns: 150 },
    );
  });
});
