import type { ConfirmationDecision } from '@berth/harness';

/** What the event handlers can do to a turn this process is running. */
export interface TurnControl {
  readonly turnId: string;
  readonly generation: number;
  /** Stops the harness; the turn then completes as interrupted. */
  interrupt(): void;
  /** Answers a tool use waiting for confirmation; false when none waits under that id. */
  confirm(harnessToolUseId: string, decision: ConfirmationDecision): boolean;
  /** The output is streamed live by this process (not a turn left over from a crash). */
  readonly attached: boolean;
  readonly done: Promise<void>;
}

/** The turns this process runs right now, one per session. */
export class RunningTurns {
  private readonly bySession = new Map<string, TurnControl>();

  get(sessionId: string): TurnControl | undefined {
    return this.bySession.get(sessionId);
  }

  set(sessionId: string, control: TurnControl): void {
    this.bySession.set(sessionId, control);
  }

  delete(sessionId: string, control: TurnControl): void {
    if (this.bySession.get(sessionId) === control) this.bySession.delete(sessionId);
  }

  all(): readonly TurnControl[] {
    return [...this.bySession.values()];
  }
}
