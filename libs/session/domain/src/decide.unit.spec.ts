import { BerthError } from '@berth/core';
import { COMMAND_TYPES, type SessionCommand } from '@berth/contracts';
import fc from 'fast-check';
import { decide } from './decide';
import { evolve } from './evolve';
import { initialState, type SessionState } from './state';
import { Cmd, Out, Res } from './testing/builders';

const oneOfEach: SessionCommand[] = [
  Cmd.create(), Cmd.update({ title: 't' }), Cmd.message('turn_1'), Cmd.interrupt(), Cmd.confirm('sevt_x_0'), Cmd.customResult('sevt_x_0'),
  Cmd.output('turn_1', 0, [Out.message('a')]), Cmd.complete('turn_1'), Cmd.fail('turn_1'), Cmd.recoverTurn('turn_1'),
  Cmd.transcriptPending('turn_1'), Cmd.bind(1), Cmd.startFailed(1), Cmd.died(1), Cmd.expired(1), Cmd.terminate(),
  Cmd.end(), Cmd.archive(), Cmd.delete(), Cmd.recover(), Cmd.permission('always_ask'), Cmd.error(), Cmd.egressDenied(1), Cmd.pause(), Cmd.resume(),
  Cmd.addResource(Res.file('sesrsc_1')), Cmd.removeResource('sesrsc_1'), Cmd.fork('sesn_fork'),
];

describe('decide', () => {
  it('handles every command type of the contract', () => {
    expect(new Set(oneOfEach.map((c) => c.type))).toEqual(new Set(COMMAND_TYPES));
  });

  it.each(oneOfEach.filter((c) => c.type !== 'CreateSession').map((c) => [c.type, c] as const))(
    'refuses %s on a session that does not exist with NOT_FOUND (404)',
    (_type, command) => {
      expect(() => decide(command, initialState())).toThrow(expect.objectContaining({ code: 'NOT_FOUND', status: 404 }));
    },
  );

  it('never fails with anything but a coded refusal, and evolve never throws, over any command sequence', () => {
    const turns = fc.constantFrom('turn_1', 'turn_2', 'turn_3');
    const gen = fc.integer({ min: 1, max: 3 });
    const anyCommand = fc.oneof(
      fc.constant(Cmd.create()),
      turns.map((t) => Cmd.message(t)),
      fc.constant(Cmd.interrupt()),
      fc.tuple(turns, fc.nat(4), gen, fc.boolean()).map(([t, o, g, ask]) => Cmd.output(t, o, [Out.toolUse(`toolu_${o}`, ask), Out.message('m')], g)),
      fc.tuple(turns, gen).map(([t, g]) => Cmd.complete(t, g)),
      turns.map((t) => Cmd.fail(t)),
      turns.map((t) => Cmd.recoverTurn(t)),
      gen.map((g) => Cmd.bind(g)),
      gen.map((g) => Cmd.died(g)),
      gen.map((g) => Cmd.startFailed(g)),
      fc.constantFrom(Cmd.terminate(), Cmd.end(), Cmd.archive(), Cmd.delete(), Cmd.recover(), Cmd.recover({ exists: false, running: false }), Cmd.pause(), Cmd.resume()),
      fc.constantFrom('sevt_a_0', 'sevt_b_1').map((id) => Cmd.confirm(id)),
      fc.constantFrom(Cmd.addResource(Res.file('sesrsc_1')), Cmd.addResource(Res.repo('sesrsc_2')), Cmd.removeResource('sesrsc_1')),
    );
    fc.assert(
      fc.property(fc.array(anyCommand, { maxLength: 30 }), (commands) => {
        let state: SessionState = initialState();
        for (const command of commands) {
          let events: readonly ReturnType<typeof decide>[number][] = [];
          try {
            events = decide(command, state);
          } catch (e) {
            if (!(e instanceof BerthError)) throw e;
          }
          state = events.reduce(evolve, state);
          // Invariants: a turn is never both current and queued; a live binding is never "unavailable".
          expect(state.queued.some((q) => q.turn_id === state.current_turn?.id)).toBe(false);
          if (state.sandbox !== null) expect(state.runtime_unavailable).toBe(false);
          // A paused session holds no sandbox, asks for none and runs no turn.
          if (state.paused) expect([state.sandbox, state.sandbox_request, state.current_turn]).toEqual([null, null, null]);
        }
      }),
      { numRuns: 300 },
    );
  });
});
