import type { Workflow } from '../decider';

/** given(inputs).when(input).then(outputs): asserts outputs only, never the state's shape. */
export function workflowSpec<I, S, O>(workflow: Workflow<I, S, O>) {
  return {
    given(inputs: readonly I[]) {
      const state = inputs.reduce(workflow.evolve, workflow.initialState());
      return {
        when(input: I) {
          const outputs = workflow.decide(input, state);
          const next = workflow.evolve(state, input);
          return {
            then(expected: readonly O[]): void {
              expect(outputs).toEqual(expected);
            },
            thenMatches(expected: readonly object[]): void {
              expect(outputs).toHaveLength(expected.length);
              expect(outputs).toMatchObject(expected);
            },
            thenNothing(): void {
              expect(outputs).toEqual([]);
            },
            /** The same input once more, after the first was applied. */
            andAgain(): readonly O[] {
              return workflow.decide(input, next);
            },
          };
        },
      };
    },
  };
}
