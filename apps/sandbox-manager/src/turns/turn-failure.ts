import type { TurnNotRunReason } from '@berth/sandbox-workflow';

/** A turn whose harness cannot be started, with the named reason the kernel records. */
export class TurnFailure extends Error {
  constructor(
    readonly reason: TurnNotRunReason,
    message: string,
  ) {
    super(message);
    this.name = 'TurnFailure';
  }
}
