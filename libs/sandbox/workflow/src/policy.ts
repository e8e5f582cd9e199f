/** The sandbox-manager's timers that are decisions rather than plumbing. */
export type ManagerPolicy = Readonly<{
  /** After an interrupt of a turn this process streams, the turn settles by this time whatever the harness does. */
  interruptDeadlineMs: number;
}>;

export const defaultManagerPolicy: ManagerPolicy = { interruptDeadlineMs: 1_500 };
