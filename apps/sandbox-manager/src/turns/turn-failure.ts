/** A turn whose harness cannot be started, with the named reason the kernel records. */
export class TurnFailure extends Error {
  constructor(
    readonly reason: 'model_error' | 'harness_failed',
    message: string,
  ) {
    super(message);
    this.name = 'TurnFailure';
  }
}
