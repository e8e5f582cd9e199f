/**
 * A Decider holds one aggregate's rules: `decide` turns a command into the events that record its
 * outcome (or throws a coded error), `evolve` folds an event into state. Both are pure; time and
 * ids arrive on the command.
 */
export type Decider<State, Command, Event> = {
  readonly decide: (command: Command, state: State) => readonly Event[];
  readonly evolve: (state: State, event: Event) => State;
  readonly initialState: () => State;
};

/**
 * A Workflow (process manager) reacts to inputs (usually events of another aggregate) and answers
 * with outputs (commands to send, effects to perform), never performing them itself.
 */
export type Workflow<Input, State, Output> = {
  readonly name: string;
  readonly decide: (input: Input, state: State) => readonly Output[];
  readonly evolve: (state: State, input: Input) => State;
  readonly initialState: () => State;
};

export const fold = <State, Event>(
  decider: Pick<Decider<State, unknown, Event>, 'evolve' | 'initialState'>,
  events: readonly Event[],
  from: State = decider.initialState(),
): State => events.reduce(decider.evolve, from);
