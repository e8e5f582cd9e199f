import type { Decider } from '../decider';
import { BerthError } from '../errors';

/**
 * given(events).when(command).then(events) | thenThrows(code) | thenNothingHappened().
 * Asserts events, never internal state, so the tests survive refactors of the state shape.
 */
export const DeciderSpec = {
  for<S, C, E>(decider: Decider<S, C, E>) {
    return {
      given(events: readonly E[]) {
        const state = events.reduce(decider.evolve, decider.initialState());
        return {
          when(command: C) {
            const run = (): readonly E[] => decider.decide(command, state);
            return {
              then(expected: readonly E[]): void {
                expect(run()).toEqual(expected);
              },
              thenMatches(expected: readonly Partial<E>[]): void {
                expect(run()).toMatchObject(expected);
              },
              thenNothingHappened(): void {
                expect(run()).toEqual([]);
              },
              thenThrows(code: string, status?: number): BerthError {
                let caught: unknown;
                try {
                  run();
                } catch (e) {
                  caught = e;
                }
                expect(caught).toBeInstanceOf(BerthError);
                const err = caught as BerthError;
                expect(err.code).toBe(code);
                if (status !== undefined) expect(err.status).toBe(status);
                return err;
              },
              events: run,
            };
          },
          state: () => state,
        };
      },
    };
  },
};
